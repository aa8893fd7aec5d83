// The direct HTTP/2 Generate path (src/engine/grpc-h2.ts): wire edge cases
// against a hand-written gRPC server, no RST_STREAM for finished streams,
// and event-for-event parity with Connect's client on both protocols.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';

import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { ConnectError } from '@connectrpc/connect';

import { EngineError } from '../src/engine/errors.js';
import { createEngineClient } from '../src/engine/factory.js';
import { frameMessage, GRPC_REQUEST_HEADERS, openServerStream } from '../src/engine/grpc-h2.js';
import { H2Client } from '../src/engine/h2/client.js';
import { STREAM_WINDOW } from '../src/engine/h2/session.js';
import type { EngineClient, EngineEvent, GenerateParams } from '../src/engine/types.js';
import { GenerateResponseSchema } from '../src/gen/sglang_scheduler_pb.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { eventually } from './helpers/eventually.js';

const never = () => new AbortController().signal;
let seq = 0;
const params = (over: Partial<GenerateParams> = {}): GenerateParams => ({
  requestId: `h2-${seq++}`,
  inputIds: Uint32Array.from([1, 2, 3]),
  stream: true,
  ...over,
});

async function collect(it: AsyncIterable<EngineEvent>): Promise<EngineEvent[]> {
  const out: EngineEvent[] = [];
  for await (const ev of it) out.push(ev);
  return out;
}

function frame(msg: Uint8Array, flags = 0): Buffer {
  const b = Buffer.alloc(5 + msg.length);
  b[0] = flags;
  b.writeUInt32BE(msg.length, 1);
  b.set(msg, 5);
  return b;
}
const chunk = (ids: number[], k: number) => toBinary(GenerateResponseSchema, create(GenerateResponseSchema, {
  response: { case: 'chunk', value: { tokenIds: ids, promptTokens: 3, completionTokens: k, index: 0 } },
}));
const complete = (k: number) => toBinary(GenerateResponseSchema, create(GenerateResponseSchema, {
  response: { case: 'complete', value: { finishReason: 'length', promptTokens: 3, completionTokens: k, index: 0 } },
}));

const ok = { ':status': 200, 'content-type': 'application/grpc+proto' };

type Behaviour = (stream: http2.ServerHttp2Stream) => void;

/** A bare HTTP/2 server answering every Generate with the behaviour set for the test. */
async function rawServer() {
  let behave: Behaviour = () => undefined;
  // Abort rpc: by default refused (UNIMPLEMENTED); a test may end the open Generate instead.
  let onAbortRpc: (open: http2.ServerHttp2Stream | undefined) => void = () => undefined;
  let open: http2.ServerHttp2Stream | undefined;
  const closed: Array<{ rstCode: number; trailersSent: boolean }> = [];
  const srv = http2.createServer();
  srv.on('stream', (st, headers) => {
    st.on('error', () => undefined);
    st.resume();
    if (String(headers[':path']).endsWith('/Abort')) {
      st.on('end', () => {
        onAbortRpc(open);
        st.respond({ ...ok, 'grpc-status': '12', 'grpc-message': 'no abort here' }, { endStream: true });
      });
      return;
    }
    open = st;
    let trailersSent = false;
    st.on('wantTrailers', () => {
      trailersSent = true;
    });
    st.on('close', () => closed.push({ rstCode: st.rstCode, trailersSent }));
    st.on('end', () => behave(st));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  const sessions = new Set<http2.ServerHttp2Session>();
  srv.on('session', (s) => sessions.add(s));
  return {
    url: `grpc://127.0.0.1:${port}`,
    closed,
    set: (b: Behaviour, abortRpc: (open: http2.ServerHttp2Stream | undefined) => void = () => undefined) => {
      behave = b;
      onAbortRpc = abortRpc;
    },
    close: () => new Promise<void>((r) => {
      for (const s of sessions) s.destroy();
      srv.close(() => r());
    }),
  };
}


describe('direct HTTP/2 Generate against a hand-written server', () => {
  let srv: Awaited<ReturnType<typeof rawServer>>;
  let client: EngineClient;
  before(async () => {
    srv = await rawServer();
    client = createEngineClient(srv.url, { rpcTimeoutMs: 300 });
  });
  after(async () => {
    client.close();
    await srv.close();
  });

  test('messages split across DATA frames and packed into one are all read', async () => {
    srv.set((st) => {
      st.respond(ok, { waitForTrailers: true });
      st.on('wantTrailers', () => st.sendTrailers({ 'grpc-status': '0' }));
      const all = Buffer.concat([frame(chunk([7], 1)), frame(chunk([8, 9], 3)), frame(complete(3))]);
      // 1 byte, then 6, then the rest in one write: headers and bodies cut anywhere.
      st.write(all.subarray(0, 1));
      setTimeout(() => {
        st.write(all.subarray(1, 7));
        setTimeout(() => st.end(all.subarray(7)), 5);
      }, 5);
    });
    const evs = await collect(client.generate(params(), never()));
    assert.deepEqual(evs.map((e) => e.kind === 'chunk' ? e.chunk.tokenIds : e.done.finishReason), [[7], [8, 9], 'length']);
  });

  test('a consumer that holds the stream pauses it past the high-water mark; release resumes it, nothing lost', { timeout: 60_000 }, async () => {
    // More messages than the queue's high-water mark (64) while the consumer holds: the
    // stream is paused, i.e. what arrives is no longer acknowledged to the worker's flow
    // control, so the rest (three of the stream's HTTP/2 windows) waits at the worker; release
    // delivers the queue, reading resumes, and every message arrives in order, then the end.
    const N = Math.ceil((3 * STREAM_WINDOW) / frame(chunk([1], 1)).length);
    const FIRST = 200;
    const frames: Buffer[] = [];
    for (let k = 1; k <= N; k++) frames.push(frame(chunk([k], k)));
    frames.push(frame(complete(N)));
    let sent!: (st: http2.ServerHttp2Stream) => void;
    const firstHalfSent = new Promise<http2.ServerHttp2Stream>((r) => (sent = r));
    srv.set((st) => {
      st.respond(ok, { waitForTrailers: true });
      st.on('wantTrailers', () => st.sendTrailers({ 'grpc-status': '0' }));
      st.write(Buffer.concat(frames.slice(0, FIRST)), () => sent(st));
    });
    const h2 = new H2Client(srv.url.replace('grpc:', 'http:'), { connectTimeoutMs: 3000, pingIntervalMs: 10_000, pingTimeoutMs: 5000, idleConnectionTimeoutMs: 60_000, headers: GRPC_REQUEST_HEADERS });
    try {
      const stream = openServerStream(h2, '/sglang.grpc.scheduler.SglangScheduler/Generate', frameMessage(new Uint8Array(0)), (b, s, e) => Buffer.from(b.subarray(s, e)));
      const got: Buffer[] = [];
      const ended = new Promise<void>((resolve, reject) => stream.listen!({ message: (m) => got.push(m), end: resolve, fail: reject }));
      stream.hold!();
      const st = await firstHalfSent;
      // A few turns of the client's loop: it reads the first half while the consumer holds.
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      st.end(Buffer.concat(frames.slice(FIRST)));
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      assert.equal(got.length, 0, 'nothing delivered while held');
      stream.release!();
      await ended;
      assert.equal(got.length, N + 1);
      const ids = got.slice(0, N).map((m) => fromBinary(GenerateResponseSchema, m)).map((r) => (r.response.case === 'chunk' ? r.response.value.tokenIds[0] : -1));
      assert.ok(ids.every((id, i) => id === i + 1), 'in order');
    } finally {
      h2.close(new ConnectError('test over'));
    }
  });

  test('trailers-only error: grpc-status and percent-encoded grpc-message become an EngineError', async () => {
    srv.set((st) => {
      st.respond({ ...ok, 'grpc-status': '8', 'grpc-message': encodeURIComponent('queue full: 100% busy') }, { endStream: true });
    });
    await assert.rejects(collect(client.generate(params(), never())), (e: unknown) =>
      e instanceof EngineError && e.code === 'overloaded' && /queue full: 100% busy/.test(e.message));
  });

  test('error status after some messages: the messages arrive, then the error', async () => {
    srv.set((st) => {
      st.respond(ok, { waitForTrailers: true });
      st.on('wantTrailers', () => st.sendTrailers({ 'grpc-status': '3', 'grpc-message': 'bad sampling' }));
      st.end(frame(chunk([5], 1)));
    });
    const seen: EngineEvent[] = [];
    await assert.rejects((async () => {
      for await (const ev of client.generate(params(), never())) seen.push(ev);
    })(), (e: unknown) => e instanceof EngineError && e.code === 'invalid_argument' && /bad sampling/.test(e.message));
    assert.equal(seen.length, 1);
  });

  test('a call the worker ended with its own error status gets no Abort rpc', async () => {
    let aborts = 0;
    srv.set((st) => {
      st.respond({ ...ok, 'grpc-status': '3', 'grpc-message': 'bad sampling' }, { endStream: true });
    }, () => aborts++);
    await assert.rejects(collect(client.generate(params(), never())), (e: unknown) => e instanceof EngineError && e.code === 'invalid_argument');
    // A later call on the same connection: an Abort sent at the failure would have reached
    // the worker before this one's request (streams are read in order).
    srv.set((st) => {
      st.respond(ok, { waitForTrailers: true });
      st.on('wantTrailers', () => st.sendTrailers({ 'grpc-status': '0' }));
      st.end(Buffer.concat([frame(chunk([5], 1)), frame(complete(1))]));
    }, () => aborts++);
    assert.equal((await collect(client.generate(params(), never()))).length, 2);
    assert.equal(aborts, 0);
  });

  test('a non-gRPC answer (HTTP 503) is unavailable', async () => {
    srv.set((st) => {
      st.respond({ ':status': 503, 'content-type': 'text/plain' });
      st.end('busy');
    });
    await assert.rejects(collect(client.generate(params(), never())), (e: unknown) => e instanceof EngineError && e.code === 'unavailable');
  });

  test('the worker resetting the stream mid-way is an EngineError, not a hang', async () => {
    srv.set((st) => {
      st.respond(ok);
      st.write(frame(chunk([5], 1)), () => setTimeout(() => st.close(http2.constants.NGHTTP2_INTERNAL_ERROR), 5));
    });
    // Node's client does not always surface the RST code; without a grpc-status the
    // call fails as gRPC says (internal), or as unavailable when the code is seen.
    await assert.rejects(collect(client.generate(params(), never())), (e: unknown) =>
      e instanceof EngineError && (e.code === 'unavailable' || e.code === 'internal'));
  });

  test('a worker that sends nothing: the first-response deadline fails the stream as a timeout that takes the worker down', async () => {
    srv.set(() => undefined); // accepts the stream, never answers
    const silent = createEngineClient(srv.url, { rpcTimeoutMs: 300, firstResponseTimeoutMs: 200 });
    try {
      await assert.rejects(collect(silent.generate(params(), never())), (e: unknown) =>
        e instanceof EngineError && e.code === 'timeout' && e.health === 'down' && /no response/.test(e.message));
    } finally {
      silent.close();
    }
  });

  test('headers then silence also hits the first-response deadline; a first message clears it', async () => {
    // Generous: the first message must arrive inside it even on a loaded machine.
    const silent = createEngineClient(srv.url, { rpcTimeoutMs: 300, firstResponseTimeoutMs: 2000 });
    try {
      srv.set((st) => st.respond(ok));
      await assert.rejects(collect(silent.generate(params(), never())), (e: unknown) => e instanceof EngineError && e.code === 'timeout');
      // A first message inside the deadline, then a pause longer than it: no timeout.
      srv.set((st) => {
        st.respond(ok, { waitForTrailers: true });
        st.on('wantTrailers', () => st.sendTrailers({ 'grpc-status': '0' }));
        st.write(frame(chunk([7], 1)));
        setTimeout(() => st.end(frame(complete(1))), 2500);
      });
      const evs = await collect(silent.generate(params(), never()));
      assert.equal(evs.length, 2);
    } finally {
      silent.close();
    }
  });

  test('what a failure says about the worker: its own status is a strike, a reset is a strike', async () => {
    srv.set((st) => {
      st.respond({ ...ok, 'grpc-status': '14', 'grpc-message': 'draining' }, { endStream: true });
    });
    await assert.rejects(collect(client.generate(params(), never())), (e: unknown) => e instanceof EngineError && e.code === 'unavailable' && e.health === 'strike');
    srv.set((st) => {
      st.respond({ ...ok, 'grpc-status': '3', 'grpc-message': 'bad' }, { endStream: true });
    });
    await assert.rejects(collect(client.generate(params(), never())), (e: unknown) => e instanceof EngineError && e.code === 'invalid_argument' && e.health === 'none');
    srv.set((st) => {
      st.respond(ok);
      st.write(frame(chunk([5], 1)), () => setTimeout(() => st.close(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM), 5));
    });
    await assert.rejects(collect(client.generate(params(), never())), (e: unknown) => e instanceof EngineError && e.health === 'strike');
  });

  test('a refused connection takes the worker down (disconnected)', async () => {
    const dead = createEngineClient('grpc://127.0.0.1:1', { rpcTimeoutMs: 300, connectTimeoutMs: 500 });
    try {
      await assert.rejects(collect(dead.generate(params(), never())), (e: unknown) => e instanceof EngineError && e.code === 'unavailable' && e.health === 'disconnected');
    } finally {
      dead.close();
    }
  });

  test('a compressed message we never asked for is an internal error', async () => {
    srv.set((st) => {
      st.respond(ok, { waitForTrailers: true });
      st.on('wantTrailers', () => st.sendTrailers({ 'grpc-status': '0' }));
      st.end(frame(chunk([5], 1), 1));
    });
    await assert.rejects(collect(client.generate(params(), never())), (e: unknown) => e instanceof EngineError && e.code === 'internal');
  });

  test('a stream that ends before every choice completed is an internal error', async () => {
    srv.set((st) => {
      st.respond(ok, { waitForTrailers: true });
      st.on('wantTrailers', () => st.sendTrailers({ 'grpc-status': '0' }));
      st.end(frame(chunk([5], 1)));
    });
    await assert.rejects(collect(client.generate(params(), never())), (e: unknown) => e instanceof EngineError && e.code === 'internal' && /0\/1 completions/.test(e.message));
  });

  test('leaving the loop after the last completion reads the stream to its trailers (no RST_STREAM)', async () => {
    srv.closed.length = 0;
    srv.set((st) => {
      st.respond(ok, { waitForTrailers: true });
      st.on('wantTrailers', () => st.sendTrailers({ 'grpc-status': '0' }));
      st.write(Buffer.concat([frame(chunk([5], 1)), frame(complete(1))]));
      // Trailers come later, after the caller already stopped reading.
      setTimeout(() => st.end(), 30);
    });
    for await (const ev of client.generate(params(), never())) {
      if (ev.kind === 'done') break;
    }
    await eventually(() => srv.closed.length > 0, 'the worker saw the stream close');
    assert.deepEqual(srv.closed, [{ rstCode: http2.constants.NGHTTP2_NO_ERROR, trailersSent: true }]);
  });

  test('leaving the loop before the end resets the stream (RST_STREAM CANCEL)', async () => {
    srv.closed.length = 0;
    srv.set((st) => {
      st.respond(ok, { waitForTrailers: true });
      st.on('wantTrailers', () => st.sendTrailers({ 'grpc-status': '0' }));
      st.write(frame(chunk([5], 1)));
    });
    for await (const ev of client.generate(params(), never())) {
      if (ev.kind === 'chunk') break;
    }
    // The worker refuses the Abort rpc and keeps the stream open: the client resets it.
    await eventually(() => srv.closed.length > 0, 'the worker saw the stream close');
    assert.deepEqual(srv.closed.map((c) => c.rstCode), [http2.constants.NGHTTP2_CANCEL]);
  });

  test('a caller abort ends the stream without a reset when the worker ends it on the Abort rpc', async () => {
    srv.closed.length = 0;
    srv.set((st) => {
      st.respond(ok, { waitForTrailers: true });
      st.on('wantTrailers', () => st.sendTrailers({ 'grpc-status': '0' }));
      st.write(frame(chunk([5], 1)));
    }, (open) => open?.end(frame(complete(1))));
    const ac = new AbortController();
    await assert.rejects((async () => {
      for await (const ev of client.generate(params(), ac.signal)) if (ev.kind === 'chunk') ac.abort();
    })(), (e: unknown) => e instanceof EngineError && e.code === 'aborted');
    await eventually(() => srv.closed.length > 0, 'the worker saw the stream close');
    assert.deepEqual(srv.closed, [{ rstCode: http2.constants.NGHTTP2_NO_ERROR, trailersSent: true }]);
  });
});

describe('Generate over the mock: direct HTTP/2 path matches Connect', () => {
  for (const protocol of ['sglang', 'vllm'] as const) {
    let echo: MockEngine;
    let sim: MockEngine;
    before(async () => {
      echo = await startMockEngine({ port: 0, mode: 'echo', protocol, eosTokenIds: [99], vocabSize: 100 });
      sim = await startMockEngine({ port: 0, mode: 'sim', protocol, eosTokenIds: [99], vocabSize: 100, stepMs: 1, prefillMsPerToken: 0, eosProbability: 0.05, streamInterval: 3 });
    });
    after(async () => {
      await echo.close();
      await sim.close();
    });

    test(`${protocol}: same events for echo, n=2, stream=false and several tokens per message`, async () => {
      const h2 = { echo: createEngineClient(echo.url), sim: createEngineClient(sim.url) };
      const cn = { echo: createEngineClient(echo.url, { generateTransport: 'connect' }), sim: createEngineClient(sim.url, { generateTransport: 'connect' }) };
      try {
        const cases: Array<[keyof typeof h2, Partial<GenerateParams>]> = [
          ['echo', { inputIds: Uint32Array.from([5, 17, 3, 42, 8]) }],
          ['echo', { inputIds: Uint32Array.from([5, 17, 3]), n: 2 }],
          ['echo', { inputIds: Uint32Array.from([5, 17, 3]), stream: false }],
          ['echo', { inputIds: Uint32Array.from([5, 17, 3, 42, 8]), maxNewTokens: 2 }],
          ['sim', { inputIds: Uint32Array.from([1, 2]), maxNewTokens: 20, seed: 3n, requestId: 'same-id' }],
        ];
        for (const [which, over] of cases) {
          const a = await collect(h2[which].generate(params(over), never()));
          const b = await collect(cn[which].generate(params(over), never()));
          assert.deepEqual(a, b, `${which} ${JSON.stringify(over, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
        }
      } finally {
        for (const c of [...Object.values(h2), ...Object.values(cn)]) c.close();
      }
    });

    test(`${protocol}: a stream longer than several PING intervals keeps its connection`, async () => {
      // Reads re-arm the keep-alive at most every pingIntervalMs / 4.
      const slow = await startMockEngine({ port: 0, mode: 'sim', protocol, eosTokenIds: [99], vocabSize: 100, stepMs: 5, eosProbability: 0 });
      const c = createEngineClient(slow.url, { pingIntervalMs: 60, pingTimeoutMs: 60 });
      try {
        const evs = await collect(c.generate(params({ inputIds: Uint32Array.from([1]), maxNewTokens: 80 }), never()));
        assert.equal(evs.filter((e) => e.kind === 'chunk').length, 80);
        assert.equal(await c.health(), true);
      } finally {
        c.close();
        await slow.close();
      }
    });

    test(`${protocol}: 1500 requests that stop reading at the last completion keep one healthy connection`, async () => {
      // Before: each one reset its stream, and after ~1000 resets the server
      // (nghttp2's rapid-reset guard) closed the connection with INTERNAL_ERROR.
      const c = createEngineClient(echo.url);
      try {
        const ids = Uint32Array.from({ length: 8 }, (_, i) => i + 1);
        const one = async () => {
          for await (const ev of c.generate(params({ inputIds: ids }), never())) if (ev.kind === 'done') break;
        };
        for (let i = 0; i < 1500; i += 50) await Promise.all(Array.from({ length: 50 }, one));
        assert.equal(await c.health(), true);
      } finally {
        c.close();
      }
    });
  }
});
