// How the KServe gRPC port is served: only when asked for (--grpc-port, PORTICO_GRPC_PORT
// or the config key; without it a frontend listens on its HTTP port alone, so two run side
// by side on one host), the API key (metadata `authorization: Bearer KEY`,
// UNAUTHENTICATED otherwise, health rpcs public as HTTP's /health is), --shards above 1
// (shard 0 serves gRPC, the printed port answers), and a taken --grpc-port refusing to start.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QWEN3, runPortico, startPortico } from './helpers/portico.js';
import { freePort } from './helpers/free-port.js';
import { listeningPorts } from './helpers/listeners.js';
import { eventually } from './helpers/eventually.js';
import { bool, grpcPortOf, inferRequest, int32, kserveClient, outputText, RequestStream, startKserve, text } from './helpers/kserve.js';

const MOCK = ['--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1'];
const bearer = (key: string): Interceptor => (next) => (req) => {
  req.header.set('authorization', `Bearer ${key}`);
  return next(req);
};

async function assertServes(url: string): Promise<void> {
  const r = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }) });
  assert.equal(r.status, 200, await r.text());
}

test('without --grpc-port a frontend listens on its HTTP port alone, and says how to serve KServe gRPC', async (t) => {
  // A worker in its own process, so that every port the frontend's process listens on is its own.
  const engine = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0']);
  t.after(() => engine.stop());
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', engine.url]);
  t.after(() => s.stop());
  await assertServes(s.url);
  assert.deepEqual(listeningPorts(s.child.pid!), [s.port]);
  assert.match(s.output(), /KServe gRPC endpoint off; serve it with --grpc-port P/);
  assert.doesNotMatch(s.output(), /KServe gRPC listening/);
});

test('two frontends on one host with different --http-port values and no --grpc-port both start and serve', async (t) => {
  const ports = [await freePort('0.0.0.0'), await freePort('0.0.0.0')];
  const servers = [];
  for (const port of ports) {
    const s = await startPortico(['serve', '--http-port', String(port), ...MOCK]);
    t.after(() => s.stop());
    servers.push(s);
  }
  assert.deepEqual(servers.map((s) => s.port), ports);
  for (const s of servers) await assertServes(s.url);
});

test('PORTICO_GRPC_PORT and the config key grpc-port turn the KServe gRPC endpoint on, as the flag does', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portico-grpc-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'portico.json');
  writeFileSync(config, JSON.stringify({ 'grpc-port': 0 }));
  for (const [args, env] of [[['--config', config], {}], [[], { PORTICO_GRPC_PORT: '0' }]] as const) {
    const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', ...MOCK, ...args], env);
    t.after(() => s.stop());
    const port = await grpcPortOf(s);
    assert.equal((await kserveClient(port).serverLive({})).live, true);
    assert.doesNotMatch(s.output(), /KServe gRPC endpoint off/);
  }
});

async function unauthenticated(p: Promise<unknown>): Promise<void> {
  await assert.rejects(p, (err: unknown) => err instanceof ConnectError && err.code === Code.Unauthenticated && /API key/.test(err.rawMessage));
}

test('--api-key: inference and metadata need the bearer key; health rpcs do not', async (t) => {
  const s = await startKserve([...MOCK, '--api-key', 'sekret']);
  t.after(() => s.proc.stop());
  const req = inferRequest('m', [text('text_input', 'Hi there'), int32('max_tokens', 2)]);
  assert.equal((await s.client.serverLive({})).live, true);
  assert.equal((await s.client.serverReady({})).ready, true);
  assert.equal((await s.client.modelReady({ name: 'm' })).ready, true);
  await unauthenticated(s.client.modelInfer(req));
  await unauthenticated(s.client.modelMetadata({ name: 'm' }));
  await unauthenticated(s.client.modelConfig({ name: 'm' }));
  await unauthenticated(s.client.serverMetadata({}));
  const wrong = kserveClient(s.grpcPort, [bearer('nope')]);
  await unauthenticated(wrong.modelInfer(req));
  const input = new RequestStream();
  input.push(req);
  input.end();
  await unauthenticated((async () => {
    for await (const _ of wrong.modelStreamInfer(input));
  })());
  const right = kserveClient(s.grpcPort, [bearer('sekret')]);
  assert.equal(outputText(await right.modelInfer(req), 'text_output'), 'Hi there');
  assert.equal((await right.modelMetadata({ name: 'm' })).name, 'm');
  const ok = new RequestStream();
  ok.push(req);
  ok.end();
  const got = [];
  for await (const r of right.modelStreamInfer(ok)) got.push(r);
  assert.equal(got.length, 1);
  assert.equal(outputText(got[0].inferResponse!, 'text_output'), 'Hi there');
});

test('--shards 2: shard 0 serves the gRPC port that is printed', async (t) => {
  const s = await startKserve(MOCK, { PORTICO_SHARDS: '2' });
  t.after(() => s.proc.stop());
  assert.match(s.proc.output(), /serving on 2 shards/);
  for (let i = 0; i < 3; i++) {
    const res = await s.client.modelInfer(inferRequest('m', [text('text_input', 'Hi there'), int32('max_tokens', 2)]));
    assert.equal(outputText(res, 'text_output'), 'Hi there');
  }
});

test('--max-concurrent-requests (one count with HTTP) and --request-timeout-secs apply to gRPC inference', async (t) => {
  const s = await startKserve(['--model-path', QWEN3, '--model-name', 'm', '--mock', 'sim', '--mock-workers', '1', '--max-concurrent-requests', '1', '--request-timeout-secs', '3']);
  t.after(() => s.proc.stop());
  const long = inferRequest('m', [text('text_input', 'tell me a long story'), int32('max_tokens', 30_000), bool('ignore_eos', true)]);
  const first = s.client.modelInfer(long);
  // The first request holds the one place: HTTP and gRPC requests are refused while it runs.
  await eventually(async () => {
    const m = await (await fetch(`${s.proc.url}/metrics`)).text();
    return /portico_frontend_inflight_requests\{model="m"\} 1/.test(m);
  }, 'the first request runs');
  await assert.rejects(s.client.modelInfer(long), (err: unknown) => err instanceof ConnectError && err.code === Code.Unavailable && /limit of 1 concurrent requests/.test(err.rawMessage));
  const http = await fetch(`${s.proc.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', prompt: 'hi', max_tokens: 2 }) });
  assert.equal(http.status, 503);
  // 30,000 tokens take longer than the 3 s limit: the request ends DEADLINE_EXCEEDED.
  await assert.rejects(first, (err: unknown) => err instanceof ConnectError && err.code === Code.DeadlineExceeded && /limit of 3 s/.test(err.rawMessage));
  const ok = await s.client.modelInfer(inferRequest('m', [text('text_input', 'Hi there'), int32('max_tokens', 2)]));
  assert.equal(ok.outputs.length, 2);
});

test('a --grpc-port in use is a startup error naming it', async (t) => {
  const blocker = createServer().listen(0, '127.0.0.1');
  await once(blocker, 'listening');
  t.after(() => blocker.close());
  const port = (blocker.address() as { port: number }).port;
  const r = await runPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', ...MOCK, '--grpc-port', String(port)]);
  assert.notEqual(r.code, 0);
  assert.match(r.stdout + r.stderr, new RegExp(`gRPC on 127\\.0\\.0\\.1:${port}: the port is in use`));
});
