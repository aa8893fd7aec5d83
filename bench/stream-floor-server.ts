// The per-token floor of the architecture: the cheapest streaming frontend that has
// Portico's shape, to read Portico's CPU per streamed token against (bench/RESULTS.md,
// "Per-token floor"). A uWS app whose POST handler opens ONE Generate stream on Portico's
// own engine HTTP/2 client (src/engine/h2, through grpc-h2.ts's stream in push mode, each
// message left undecoded) and, for every gRPC message the worker sends, queues one fixed
// SSE chunk of a typical size; the queued chunks of every stream are
// written once per event-loop turn (setImmediate, corked), as Portico's exchange does. No
// tokenizer, no detokenizer, no protobuf decoding, no JSON: what is left is the HTTP/2
// framing, the socket reads and the client writes every frontend of this shape pays.
//
// Usage: node dist/bench/stream-floor-server.js PORT ENGINE_PORT
// The request body's "max_tokens" (a plain regex read) is the stream's length. Prints
// "listening on 127.0.0.1:PORT" once ready.

import { encodeSglangGenerate } from '../src/engine/sglang-generate-wire.js';
import { H2Client } from '../src/engine/h2/client.js';
import { GRPC_REQUEST_HEADERS, openServerStream } from '../src/engine/grpc-h2.js';
import { SglangScheduler } from '../src/gen/sglang_scheduler_pb.js';
import { uws, type HttpResponse } from '../src/http/uws.js';
import { readBody } from './uws-body.js';

const [portArg, enginePortArg] = process.argv.slice(2);

if (portArg && enginePortArg) {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(0));
  const GENERATE = `/${SglangScheduler.typeName}/${SglangScheduler.method.generate.name}`;
  const client = new H2Client(`http://127.0.0.1:${Number(enginePortArg)}`, { headers: GRPC_REQUEST_HEADERS });
  // A content chunk the size of Portico's for a one-word token.
  const CHUNK = 'data: {"id":"chatcmpl-0123456789abcdef0123456789abcdef","object":"chat.completion.chunk","created":1764000000,"model":"Qwen3-0.6B","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}]}\n\n';
  const PROMPT = Uint32Array.from([151644, 872, 198, 9707, 1052, 11, 1246, 525, 498, 3351, 30, 151645, 198, 151644, 77091, 198]);

  /** One client stream: what its engine stream made this turn, written at the turn's end. */
  class FloorStream {
    pending = '';
    head = true;
    queued = false;
    ended = false;
    failed = false;
    gone = false;

    constructor(readonly res: HttpResponse) {}

    queue(text: string): void {
      this.pending += text;
      if (this.queued) return;
      this.queued = true;
      turn.push(this);
      if (turn.length === 1) setImmediate(flushTurn);
    }

    over(failed: boolean): void {
      this.ended = true;
      this.failed = failed;
      this.queue(failed ? '' : 'data: [DONE]\n\n');
    }

    flush(): void {
      this.queued = false;
      if (this.gone) return;
      const res = this.res;
      const text = this.pending;
      this.pending = '';
      res.cork(() => {
        if (this.head && this.failed) {
          res.writeStatus('502 Bad Gateway').end();
          return;
        }
        if (this.head) {
          this.head = false;
          res.writeStatus('200 OK').writeHeader('content-type', 'text/event-stream').writeHeader('cache-control', 'no-cache');
        }
        if (this.ended) res.end(text);
        else res.write(text);
      });
    }
  }

  const turn: FloorStream[] = [];
  const flushTurn = (): void => {
    for (let i = 0; i < turn.length; i++) turn[i]!.flush();
    turn.length = 0;
  };

  uws
    .App()
    .post('/*', (res) => {
      readBody(res, (body, aborted) => {
        if (aborted()) return;
        const m = /"max_tokens"\s*:\s*(\d+)/.exec(body.toString('latin1'));
        const frame = Buffer.from(encodeSglangGenerate({
          requestId: `chatcmpl-floor-${Math.random().toString(16).slice(2)}`,
          inputIds: PROMPT,
          maxNewTokens: m ? Number(m[1]) : 16,
          temperature: 1,
          stopTokenIds: [151645],
          stream: true,
        }));
        const s = new FloorStream(res);
        res.onAborted(() => {
          s.gone = true;
        });
        // Portico's engine stream (its gRPC framing and status), each message left undecoded.
        openServerStream(client, GENERATE, frame, () => 0).listen!({
          message: () => s.queue(CHUNK),
          end: () => s.over(false),
          fail: () => s.over(true),
        });
      });
    })
    .listen('127.0.0.1', Number(portArg), (ls) => {
      if (!ls) process.exit(1);
      console.log(`listening on 127.0.0.1:${uws.us_socket_local_port(ls)}`);
    });
}
