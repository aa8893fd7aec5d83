// Who may use the admin surface (/admin/workers, /busy_threshold) and /metrics, through a
// real `portico serve`: loopback clients without a key, the admin key from anywhere when
// one is set, JSON-only mutations, validated and canonicalised worker URLs whose
// credentials are never echoed, and the 403 for a peer that is not loopback (a client in a
// network namespace of the test's own, joined by a veth pair: no traffic leaves the machine).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPeerNamespace, type PeerReply } from './helpers/netns.js';
import { runPortico, startPortico, QWEN3 } from './helpers/portico.js';

const BASE = ['serve', '--http-port', '0', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1'];
const LOCAL = [...BASE, '--host', '127.0.0.1'];

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

async function call(base: string, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(`${base}${path}`, { method, headers: { connection: 'close', ...headers }, body });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // /metrics is text
  }
  return { status: res.status, headers: res.headers, text, json };
}

const JSON_TYPE = { 'content-type': 'application/json' };
const post = (base: string, path: string, body: unknown, headers: Record<string, string> = {}) => call(base, 'POST', path, JSON.stringify(body), { ...JSON_TYPE, ...headers });

function assertError(r: Reply, status: number, code: string, message: RegExp, what: string): void {
  assert.equal(r.status, status, `${what}: ${r.text}`);
  assert.equal(r.headers.get('content-type'), 'application/json', what);
  assert.equal(r.json?.error?.code, code, `${what}: ${r.text}`);
  assert.match(r.json.error.message, message, what);
  assert.equal(typeof r.json.error.type, 'string', what);
}

test('without --admin-api-key: loopback clients manage workers, browsers and non-JSON bodies are refused', async (t) => {
  const engine = await startPortico(['mock-engine', '--port', '0', '--model-path', QWEN3, '--mode', 'echo']);
  t.after(() => engine.stop());
  const s = await startPortico([...LOCAL, '--log-level', 'debug', '--log-requests']);
  t.after(() => s.stop());

  const listed = await call(s.url, 'GET', '/admin/workers');
  assert.equal(listed.status, 200);
  const mockUrl: string = listed.json.models[0].workers[0].url;
  assert.equal((await call(s.url, 'GET', '/busy_threshold')).status, 200);

  // A page in a browser sends Origin: loopback trust is not for it (CSRF, DNS rebinding).
  for (const [method, path, body] of [['GET', '/admin/workers', undefined], ['POST', '/admin/workers', JSON.stringify({ url: engine.url })], ['POST', '/busy_threshold', '{}']] as const) {
    assertError(await call(s.url, method, path, body, { ...JSON_TYPE, origin: 'http://evil.example' }), 403, 'admin_forbidden', /browser/, `${method} ${path} with Origin`);
  }
  // Bodies a browser sends cross-origin without a preflight, and no type at all.
  for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', null]) {
    const headers: Record<string, string> = type ? { 'content-type': type } : {};
    for (const path of ['/admin/workers', '/busy_threshold']) {
      assertError(await call(s.url, 'POST', path, JSON.stringify({ url: engine.url, active_prefill_tokens_threshold: 5 }), headers), 415, 'unsupported_media_type', /application\/json/, `POST ${path} as ${type}`);
    }
  }
  assertError(await call(s.url, 'DELETE', '/admin/workers/0', 'x', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type', /application\/json/, 'DELETE with a text body');
  // Nothing was changed by the refused requests.
  const still = await call(s.url, 'GET', '/admin/workers');
  assert.deepEqual(still.json.models[0].workers.map((w: { id: number }) => w.id), [0]);
  assert.equal((await call(s.url, 'GET', '/busy_threshold')).json.thresholds[0].active_prefill_tokens_threshold, null);

  // Bad URLs: each a 400 naming the problem, never the URL (whose credentials stay unseen).
  const SECRET = 's3cr3t-pw';
  const bad: [string, RegExp][] = [
    [`http://127.0.0.1:1`, /scheme "http"/],
    [`grpc://user:${SECRET}@127.0.0.1:1`, /credentials/],
    [`vllm+grpc://${SECRET}@h:1`, /credentials/],
    [`https://u:${SECRET}@h:1`, /scheme "https"/],
    ['grpc://127.0.0.1', /no port/],
    [`grpc://127.0.0.1:1/${SECRET}`, /path, query or fragment/],
    [`grpc://127.0.0.1:1?key=${SECRET}`, /path, query or fragment/],
    ['grpc://127.0.0.1:99999', /outside 1-65535/],
    ['grpc://127.0.0.1:0', /outside 1-65535/],
    [`not-a-url-${SECRET}`, /not an absolute URL/],
    [`grpc://h:1 ${SECRET}`, /spaces or control/],
    ['grpc://[::1:1', /invalid host or port/],
  ];
  for (const [url, message] of bad) {
    const r = await post(s.url, '/admin/workers', { url });
    assertError(r, 400, 'invalid_worker_url', message, url);
    assert.equal(r.json.error.param, 'url');
    assert.ok(!r.text.includes(SECRET), `${url}: ${r.text}`);
  }
  const notString = await post(s.url, '/admin/workers', { url: 42 });
  assert.equal(notString.status, 400);
  assert.match(notString.json.error.message, /`url` is required/);

  // A JSON type with parameters is JSON; the worker is added under its canonical URL.
  const added = await call(s.url, 'POST', '/admin/workers', JSON.stringify({ url: engine.url.replace('grpc://', 'GRPC://') + '/' }), { 'content-type': 'Application/JSON; charset=utf-8' });
  assert.equal(added.status, 201, added.text);
  assert.equal(added.json.worker.url, engine.url);
  // The same worker spelled differently is a duplicate; so is the --mock worker's.
  const port = Number(new URL(engine.url.replace('grpc:', 'http:')).port);
  for (const again of [engine.url, `${engine.url}/`, `Grpc://127.0.0.1:0${port}`, `grpc://127.1:${port}`, mockUrl.toUpperCase()]) {
    assertError(await post(s.url, '/admin/workers', { url: again }), 409, 'worker_exists', /already serving/, again);
  }
  const removed = await call(s.url, 'DELETE', '/admin/workers/1');
  assert.equal(removed.status, 200, 'DELETE without a body needs no content type');
  assert.equal((await post(s.url, '/busy_threshold', { active_prefill_tokens_threshold: 7 })).status, 200);

  // The server still serves, and no secret reached the log at debug level.
  const chat = await post(s.url, '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'still here' }], nvext: { use_raw_prompt: true } });
  assert.equal(chat.json.choices[0].message.content, 'still here');
  assert.match(s.output(), /request rejected/, 'the log has the debug lines the check looks through');
  assert.ok(!s.output().includes(SECRET), 'no credential in the log');
  const metrics = await call(s.url, 'GET', '/metrics');
  assert.equal(metrics.status, 200);
  assert.ok(!metrics.text.includes(SECRET), 'no credential in the metrics');
});

test('with --admin-api-key: the admin key and only it opens the admin API; --api-key stays for the API', async (t) => {
  const s = await startPortico([...LOCAL, '--admin-api-key', 'adm-key', '--api-key', 'api-key']);
  t.after(() => s.stop());
  for (const [what, headers] of [
    ['no key', {}],
    ['a wrong key', { authorization: 'Bearer nope' }],
    ['the API key', { authorization: 'Bearer api-key' }],
    ['the admin key with a suffix', { authorization: 'Bearer adm-keyx' }],
  ] as [string, Record<string, string>][]) {
    for (const [method, path, body] of [['GET', '/admin/workers', undefined], ['POST', '/admin/workers', '{"url":"grpc://127.0.0.1:1"}'], ['DELETE', '/admin/workers/0', undefined], ['GET', '/busy_threshold', undefined], ['POST', '/busy_threshold', '{}']] as const) {
      const r = await call(s.url, method, path, body, { ...JSON_TYPE, ...headers });
      assertError(r, 401, 'invalid_api_key', /admin API key/, `${method} ${path} with ${what}`);
      assert.equal(r.headers.get('www-authenticate'), 'Bearer');
    }
  }
  assert.equal((await call(s.url, 'GET', '/admin/workers', undefined, { authorization: 'Bearer adm-key' })).status, 200);
  assert.equal((await call(s.url, 'GET', '/admin/workers', undefined, { 'x-api-key': 'adm-key' })).status, 200);
  // With the key, a browser page may call it; bodies are still JSON only.
  assert.equal((await call(s.url, 'GET', '/busy_threshold', undefined, { authorization: 'Bearer adm-key', origin: 'https://ops.example' })).status, 200);
  assertError(await call(s.url, 'POST', '/busy_threshold', '{}', { authorization: 'Bearer adm-key', 'content-type': 'text/plain' }), 415, 'unsupported_media_type', /application\/json/, 'text/plain with the key');
  const set = await post(s.url, '/busy_threshold', { active_prefill_tokens_threshold: 9 }, { authorization: 'Bearer adm-key' });
  assert.equal(set.status, 200);
  assert.equal(set.json.active_prefill_tokens_threshold, 9);
  // The admin key is not an API key, and the API key still guards the API.
  assert.equal((await post(s.url, '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x' }] }, { authorization: 'Bearer adm-key' })).status, 401);
  assert.equal((await post(s.url, '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x' }] }, { authorization: 'Bearer api-key' })).status, 200);
  assert.equal((await call(s.url, 'GET', '/metrics')).status, 200, '/metrics stays public without --metrics-api-key');
});

test('the admin key can come from PORTICO_ADMIN_API_KEY, and --admin-api-key shows in serve --help', async (t) => {
  const s = await startPortico(LOCAL, { PORTICO_ADMIN_API_KEY: 'from-env' });
  t.after(() => s.stop());
  assert.equal((await call(s.url, 'GET', '/admin/workers')).status, 401);
  assert.equal((await call(s.url, 'GET', '/admin/workers', undefined, { authorization: 'Bearer from-env' })).status, 200);
  const help = (await runPortico(['serve', '--help'])).stdout;
  assert.match(help, /--admin-api-key KEY[\s\S]*PORTICO_ADMIN_API_KEY/);
  assert.match(help, /--metrics-api-key KEY[\s\S]*PORTICO_METRICS_API_KEY/);
});

test('--metrics-api-key guards /metrics only; /health and /live stay public', async (t) => {
  const s = await startPortico([...LOCAL, '--metrics-api-key', 'mkey']);
  t.after(() => s.stop());
  for (const headers of [{}, { authorization: 'Bearer wrong' }, { 'x-api-key': 'mkeyx' }] as Record<string, string>[]) {
    const r = await call(s.url, 'GET', '/metrics', undefined, headers);
    assertError(r, 401, 'invalid_api_key', /metrics API key/, `/metrics with ${JSON.stringify(headers)}`);
    assert.ok(!r.text.includes('portico_frontend_'), 'no metric in the refusal');
  }
  for (const headers of [{ authorization: 'Bearer mkey' }, { 'x-api-key': 'mkey' }] as Record<string, string>[]) {
    const r = await call(s.url, 'GET', '/metrics', undefined, headers);
    assert.equal(r.status, 200);
    assert.match(r.text, /^# TYPE portico_frontend_requests_total counter$/m);
  }
  assert.equal((await call(s.url, 'GET', '/health')).status, 200);
  assert.equal((await call(s.url, 'GET', '/live')).status, 200);
  assert.equal((await post(s.url, '/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x' }] })).status, 200, 'the API needs no metrics key');
  assert.equal((await call(s.url, 'GET', '/admin/workers')).status, 200, 'nor the admin API from loopback');
});

test('a peer that is not loopback gets 403 from every shard unless it brings the admin key', async (t) => {
  const peer = createPeerNamespace();
  if (!peer) {
    t.skip('cannot make a network namespace here (needs root and iproute2)');
    return;
  }
  t.after(() => peer.remove());
  const engine = await startPortico(['mock-engine', '--port', '0', '--model-path', QWEN3, '--mode', 'echo']);
  t.after(() => engine.stop());
  const open = await startPortico([...BASE, '--host', '0.0.0.0', '--shards', '2']);
  t.after(() => open.stop());
  const remote = `http://${peer.hostAddress}:${open.port}`;
  const from = `from ${peer.peerAddress}`;
  // Fresh connections, so both shards answer some of them (the kernel spreads connections).
  const calls = [];
  for (let i = 0; i < 16; i++) {
    calls.push({ url: `${remote}/admin/workers`, method: 'GET' });
    calls.push({ url: `${remote}/admin/workers`, method: 'POST', body: JSON.stringify({ url: engine.url }), headers: JSON_TYPE });
    calls.push({ url: `${remote}/busy_threshold`, method: 'POST', body: JSON.stringify({ active_prefill_tokens_threshold: 1 }), headers: JSON_TYPE });
  }
  calls.push({ url: `${remote}/v1/models`, method: 'GET' }, { url: `${remote}/metrics`, method: 'GET' });
  const replies = (await peer.calls(calls)).map(asReply);
  for (let i = 0; i < 16; i++) {
    assertError(replies[3 * i], 403, 'admin_forbidden', /loopback/, `GET ${from}`);
    assertError(replies[3 * i + 1], 403, 'admin_forbidden', /--admin-api-key/, `POST ${from}`);
    assertError(replies[3 * i + 2], 403, 'admin_forbidden', /loopback/, `POST /busy_threshold ${from}`);
  }
  assert.equal(replies[48].status, 200, 'the API is served to the same peer');
  assert.equal(replies[49].status, 200);
  const local = await call(`http://127.0.0.1:${open.port}`, 'GET', '/admin/workers');
  assert.equal(local.status, 200, 'loopback is still allowed');
  assert.deepEqual(local.json.models[0].workers.map((w: { id: number }) => w.id), [0], 'no refused request added a worker');

  const keyed = await startPortico([...BASE, '--host', '0.0.0.0', '--shards', '2', '--admin-api-key', 'k2']);
  t.after(() => keyed.stop());
  const remoteKeyed = `http://${peer.hostAddress}:${keyed.port}`;
  const auth = { authorization: 'Bearer k2' };
  const [nokey, added] = (
    await peer.calls([
      { url: `${remoteKeyed}/admin/workers`, method: 'GET' },
      { url: `${remoteKeyed}/admin/workers`, method: 'POST', body: JSON.stringify({ url: engine.url }), headers: { ...JSON_TYPE, ...auth } },
    ])
  ).map(asReply);
  assertError(nokey, 401, 'invalid_api_key', /admin API key/, 'no key from afar');
  assert.equal(added.status, 201, added.text);
  // The change was relayed to both shards: 64 fresh connections reach both of them.
  const seen = new Set<number>();
  const lists = (await peer.calls(Array.from({ length: 64 }, () => ({ url: `${remoteKeyed}/admin/workers`, method: 'GET', headers: auth })))).map(asReply);
  for (const r of lists) {
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.models[0].workers.map((w: { id: number }) => w.id), [0, 1], `shard ${r.json.shard} has the new worker`);
    seen.add(r.json.shard);
  }
  assert.deepEqual([...seen].sort(), [0, 1], 'both shards answered');
});

function asReply(r: PeerReply): Reply {
  let json: any = null;
  try {
    json = JSON.parse(r.text);
  } catch {
    // /metrics is text
  }
  return { status: r.status, headers: new Headers(r.headers), text: r.text, json };
}
