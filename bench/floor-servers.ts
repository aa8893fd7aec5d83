// The two processes of bench/floor.bench.ts's floor: the cheapest engine and the cheapest
// frontend the architecture allows (uWebSockets.js HTTP, one gRPC call over Node's http2).
//
//   engine PORT       An h2c gRPC server that answers every Generate call at once with one
//                     fixed write of two GenerateResponses (a `chunk` of one token and the
//                     `complete`, finish "length": what an engine sends for Portico's
//                     stream-mode request of one token) and grpc-status 0 trailers, HealthCheck with healthy = true, and any
//                     other rpc with grpc-status 12 (Unimplemented). Its Generate answer is a
//                     valid reply for Portico's engine client, so Portico can run against it.
//   uws-h2 PORT ENGINE_PORT
//                     A uWS app whose POST handler copies the body out, makes ONE Generate
//                     call (a fixed request frame as Portico's encoder writes it) over one
//                     kept-alive node:http2 session, and once the call's stream closes
//                     answers a small JSON body (grpc-status 0) or a 502. GET /v1/models
//                     lists one model, "floor".
//
// Usage: node dist/bench/floor-servers.js engine PORT | uws-h2 PORT ENGINE_PORT
// Each prints "listening on 127.0.0.1:PORT" once ready.

import http2 from 'node:http2';

import { create, toBinary } from '@bufbuild/protobuf';

import { encodeSglangGenerate } from '../src/engine/sglang-generate-wire.js';
import { GenerateResponseSchema, HealthCheckResponseSchema, SglangScheduler } from '../src/gen/sglang_scheduler_pb.js';
import { uws } from '../src/http/uws.js';
import { readBody } from './uws-body.js';

const [kind, portArg, enginePortArg] = process.argv.slice(2);
// Exit through process.exit on signals, so `node --cpu-prof` writes its profile.
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(0));
const port = Number(portArg);

const GENERATE = `/${SglangScheduler.typeName}/${SglangScheduler.method.generate.name}`;
const HEALTH = `/${SglangScheduler.typeName}/${SglangScheduler.method.healthCheck.name}`;

function frame(bytes: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + bytes.length);
  out.writeUInt32BE(bytes.length, 1);
  out.set(bytes, 5);
  return out;
}

if (kind === 'engine') {
  // What `portico mock-engine --mode echo` sends for Portico's max_tokens 1 request (always
  // stream mode: the token in a chunk, then the complete), its first prompt token
  // <|im_start|>, without the request id.
  const usage = { promptTokens: 16, completionTokens: 1 };
  const generateReply = Buffer.concat([
    frame(toBinary(GenerateResponseSchema, create(GenerateResponseSchema, { response: { case: 'chunk', value: { tokenIds: [151644], ...usage } } }))),
    frame(toBinary(GenerateResponseSchema, create(GenerateResponseSchema, { response: { case: 'complete', value: { outputIds: [151644], finishReason: 'length', ...usage } } }))),
  ]);
  const healthReply = frame(toBinary(HealthCheckResponseSchema, create(HealthCheckResponseSchema, { healthy: true })));
  const headers = { ':status': 200, 'content-type': 'application/grpc+proto' };
  const trailers = { 'grpc-status': '0' };
  const unimplemented = { ...headers, 'grpc-status': '12' };
  const options = { waitForTrailers: true };
  function sendTrailers(this: http2.ServerHttp2Stream): void {
    this.sendTrailers(trailers);
  }
  const server = http2.createServer();
  server.on('stream', (stream, h) => {
    stream.resume(); // the request's message is not read
    const path = h[':path'];
    const reply = path === GENERATE ? generateReply : path === HEALTH ? healthReply : undefined;
    if (!reply) {
      stream.respond(unimplemented, { endStream: true });
      return;
    }
    stream.respond(headers, options);
    stream.once('wantTrailers', sendTrailers);
    stream.end(reply);
  });
  server.listen(port, '127.0.0.1', () => console.log(`listening on 127.0.0.1:${(server.address() as { port: number }).port}`));
} else if (kind === 'uws-h2') {
  const session = http2.connect(`http://127.0.0.1:${Number(enginePortArg)}`);
  session.on('error', (err) => {
    console.error(err);
    process.exit(1);
  });
  // A request as Portico's engine client sends it: its headers and the frame of an
  // 11-token, max_tokens 1 GenerateRequest from Portico's own encoder.
  const requestHeaders = {
    ':method': 'POST',
    ':path': GENERATE,
    'content-type': 'application/grpc+proto',
    te: 'trailers',
    'grpc-accept-encoding': 'identity',
    'user-agent': 'portico-engine-client',
  };
  // Each call its own request id (an engine with a scheduler refuses a second request under an
  // id still in flight): the frame is encoded per request, as any frontend must.
  let calls = 0;
  const inputIds = Uint32Array.from([151644, 872, 198, 9707, 1052, 11, 1246, 525, 498, 3351, 30, 151645, 198, 151644, 77091, 198]);
  const requestFrame = () => Buffer.from(encodeSglangGenerate({
    requestId: `chatcmpl-floor-${(calls++).toString(16).padStart(16, '0')}`,
    inputIds,
    maxNewTokens: 1,
    temperature: 1,
    stopTokenIds: [151645],
    stream: true,
  }));
  const ok = '{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"length"}]}';
  uws
    .App()
    // A model list, so a client that asks first (`portico bench` without --model) can drive it.
    .get('/v1/models', (res) => {
      res.cork(() => res.writeHeader('content-type', 'application/json').end('{"object":"list","data":[{"id":"floor","object":"model"}]}'));
    })
    .post('/*', (res) => {
      readBody(res, (_body, aborted) => {
        const s = session.request(requestHeaders);
        let status: string | undefined;
        s.on('trailers', (t) => {
          status = t['grpc-status'] as string;
        });
        s.on('data', () => {});
        s.on('error', () => {});
        s.on('close', () => {
          if (aborted()) return;
          res.cork(() => {
            if (status === '0') res.writeHeader('content-type', 'application/json').end(ok);
            else res.writeStatus('502 Bad Gateway').end();
          });
        });
        s.end(requestFrame());
      });
    })
    .listen('127.0.0.1', port, (ls) => {
      if (!ls) process.exit(1);
      console.log(`listening on 127.0.0.1:${uws.us_socket_local_port(ls)}`);
    });
} else {
  console.error('usage: floor-servers.js engine PORT | uws-h2 PORT ENGINE_PORT');
  process.exit(2);
}
