// Nothing lost or double-counted across a NATS restart. A real nats-server
// (JetStream) is stopped while two kv-mode frontend replicas serve on two sim workers,
// and restarted on the same port and store. The KV event batches the workers published
// while it was away reach both replicas exactly once: each replica's applied-batch
// count per worker equals the batches the stream holds for that worker (read straight
// from JetStream), with no sequence gap, and its index equals that of a replica started
// afterwards, which read the stream once from the start. A request in flight through one
// replica across the outage counts once in the other's load after the reconnect (not
// twice), and every load figure is back to 0 (never negative) when it ends.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';
import { startNats, type NatsServer } from './helpers/nats.js';
import { eventually } from './helpers/eventually.js';
import { assertPromtoolClean } from './helpers/promtool.js';

const NS = 'reconn';
let nats: NatsServer;
const engines: Proc[] = [];
before(async () => {
  nats = await startNats();
  for (let i = 0; i < 2; i++) {
    // Slow decode (20 ms a token, no EOS) so a long answer stays in flight across the outage.
    engines.push(await startPortico(['mock-engine', '--port', '0', '--model-path', QWEN3, '--mode', 'sim', '--model-name', 'm', '--namespace', NS, '--event-plane', nats.url, '--step-ms', '20', '--eos-probability', '0']));
  }
});
after(async () => {
  for (const e of engines) await e.stop();
  await nats?.destroy();
});

function frontend(): Promise<Proc> {
  return startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--namespace', NS, '--router-mode', 'kv', '--event-plane', nats.url, '--replica-sync-expiry-secs', '1', ...engines.flatMap((e) => ['--worker', e.url])]);
}

const client = (s: Proc) => new OpenAI({ baseURL: `${s.url}/v1`, apiKey: 'none', maxRetries: 0 });

/** Every series of metric `name` (portico_frontend_ prefix), by worker id. */
async function series(s: Proc, name: string): Promise<Map<number, number>> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const out = new Map<number, number>();
  for (const m of text.matchAll(new RegExp(`^portico_frontend_${name}\\{model="m",worker="(\\d+)"\\} (\\S+)$`, 'gm'))) out.set(Number(m[1]), Number(m[2]));
  return out;
}

const sum = (m: Map<number, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/** Worker id → the engine URL it is (GET /admin/workers). */
async function workerUrls(s: Proc): Promise<Map<number, string>> {
  const j = (await (await fetch(`${s.url}/admin/workers`)).json()) as any;
  return new Map(j.models[0].workers.map((w: any) => [w.id as number, w.url as string]));
}

/** KV event batches the stream holds for each engine URL (what the engines published, deduplicated by JetStream). */
async function batchesInStream(): Promise<Map<string, number>> {
  const nc = await connect({ servers: nats.url.replace('nats://', '') });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(`${NS.toUpperCase()}_KV`, { subjects_filter: '>' });
    const bySubject = info.state.subjects ?? {};
    const out = new Map<string, number>();
    for (const e of engines) {
      const tok = Buffer.from(e.url).toString('base64url');
      out.set(e.url, Object.entries(bySubject).filter(([s]) => s.endsWith(`.${tok}`)).reduce((a, [, n]) => a + n, 0));
    }
    return out;
  } finally {
    await nc.close();
  }
}

/** Each worker's applied batches on `s`, keyed by engine URL. */
async function appliedByUrl(s: Proc): Promise<Map<string, number>> {
  const ids = await workerUrls(s);
  const applied = await series(s, 'kv_event_batches_applied_total');
  return new Map([...applied].map(([id, n]) => [ids.get(id)!, n]));
}

const prompt = (tag: string) => `${tag}: ${'the quick brown fox jumps over the lazy dog '.repeat(40)}`;

/** One short completion (on worker `pin` if given); the worker that served it (nvext worker_id, Portico's extension). */
async function complete(s: Proc, text: string, pin?: number): Promise<number> {
  const body = { model: 'm', messages: [{ role: 'user' as const, content: text }], max_tokens: 2, nvext: { use_raw_prompt: true, extra_fields: ['worker_id'] } };
  const headers = pin === undefined ? {} : { 'x-dynamo-worker-instance-id': String(pin) };
  const r = (await client(s).chat.completions.create(body, { headers })) as any;
  assert.equal(r.choices.length, 1);
  return r.nvext.worker_id.decode_worker_id as number;
}

test('KV events published while NATS was away are applied exactly once, and load returns to 0', async (t) => {
  const a = await frontend();
  t.after(() => a.stop());
  const b = await frontend();
  t.after(() => b.stop());
  // Pinned alternately: both engines publish batches before the outage (the router alone
  // may send four prompts of one shape to one worker).
  const ids = [...(await workerUrls(a)).keys()];
  for (let i = 0; i < 4; i++) assert.equal(await complete(a, prompt(`before ${i}`), ids[i % ids.length]), ids[i % ids.length]);
  let beforeOutage = 0;
  await eventually(async () => {
    const [inStream, onB] = [await batchesInStream(), await appliedByUrl(b)];
    beforeOutage = [...inStream.values()].reduce((x, y) => x + y, 0);
    return engines.every((e) => (inStream.get(e.url) ?? 0) > 0 && onB.get(e.url) === inStream.get(e.url));
  }, 'B has applied every batch published before the outage');
  const t0 = Date.now();
  const mark = (what: string) => t.diagnostic(`${what} at +${Date.now() - t0} ms`);

  // A long request in flight through A, held across the outage.
  const ac = new AbortController();
  const stream = await client(a).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: prompt('held') }], max_tokens: 2000, stream: true }, { signal: ac.signal });
  const it = stream[Symbol.asyncIterator]();
  await it.next();
  const held = (async () => {
    try {
      while (!(await it.next()).done);
    } catch {
      /* aborted */
    }
  })();
  await eventually(async () => sum(await series(b, 'worker_active_requests')) === 1, "A's request counts in B's load");

  mark('held');
  await nats.stop();
  mark('nats stopped');
  for (const s of [a, b]) await eventually(async () => ((await (await fetch(`${s.url}/health`)).json()) as any).event_plane.connected === false, 'NATS is seen lost');
  // Served while NATS is away: the engines queue these KV batches until it is back.
  const before = await batchesInStream().catch(() => null);
  assert.equal(before, null, 'NATS is down');
  const away: [string, number][] = [];
  for (let i = 0; i < 3; i++) away.push([prompt(`while away ${i}`), await complete(a, prompt(`while away ${i}`))]);
  away.push([prompt('while away on B'), await complete(b, prompt('while away on B'))]);
  // A is not heard from for the expiry (1 s): B drops A's load rather than keep a stale figure.
  await eventually(async () => sum(await series(b, 'worker_active_requests')) === 0, "B expires A's load while NATS is away");

  mark('served while away; A expired from B');
  await nats.start();
  mark('nats started');
  for (const s of [a, b]) {
    await eventually(async () => {
      const e = ((await (await fetch(`${s.url}/health`)).json()) as any).event_plane;
      return e.connected === true && e.reconnects >= 1;
    }, 'the replica reconnects');
  }
  // The request held across the outage counts once again in B's view (A's next snapshot), not twice.
  await eventually(async () => sum(await series(b, 'worker_active_requests')) === 1, "A's held request is back in B's load");
  assert.equal(sum(await series(a, 'worker_active_requests')), 1, 'A counts its own request once');
  mark('held request counted once again');

  ac.abort();
  await held;
  for (const s of [a, b]) await eventually(async () => sum(await series(s, 'worker_active_requests')) === 0, 'load returns to 0 when the held request ends');

  // (The held request's decode filled KV blocks too; with it ended, the stream is quiet.)
  // Everything the engines queued is in the stream now (JetStream's duplicate window
  // drops a retried publish), and each replica applies it once: its count equals the
  // stream's, not more (replayed) nor less (lost).
  const target = await (async () => {
    let last = new Map<string, number>();
    await eventually(async () => {
      const now = await batchesInStream();
      const onA = await appliedByUrl(a);
      const onB = await appliedByUrl(b);
      last = now;
      return engines.every((e) => onA.get(e.url) === now.get(e.url) && onB.get(e.url) === now.get(e.url));
    }, 'both replicas applied every batch in the stream');
    return last;
  })();
  const total = [...target.values()].reduce((x, y) => x + y, 0);
  assert.ok(total > beforeOutage, `${beforeOutage} batches before the outage, ${total} after`);
  mark('all applied');
  for (const s of [a, b]) {
    assert.deepEqual([...(await series(s, 'kv_event_sequence_gaps_total')).values()], [0, 0], 'no sequence gap: nothing was lost');
    assertPromtoolClean(await (await fetch(`${s.url}/metrics`)).text());
  }
  // A replica started now reads the stream once from the start: the same index as the
  // replicas that lived through the outage.
  const c = await frontend();
  t.after(() => c.stop());
  // (Compared all at once: an engine may still be flushing its queue into the stream.)
  await eventually(async () => {
    const now = await batchesInStream();
    const counts = [await appliedByUrl(a), await appliedByUrl(b), await appliedByUrl(c)];
    return engines.every((e) => counts.every((m) => m.get(e.url) === now.get(e.url)));
  }, 'a late replica applies the whole stream, as many batches as the replicas that lived through the outage');
  const blocks = await series(c, 'worker_kv_blocks');
  assert.ok(sum(blocks) > 50, `blocks indexed (${sum(blocks)})`);
  assert.deepEqual(await series(a, 'worker_kv_blocks'), blocks, "A's index matches a fresh replay");
  assert.deepEqual(await series(b, 'worker_kv_blocks'), blocks, "B's index matches a fresh replay");
  // The late replica knows the outage's prefixes only from the stream (the replica-sync
  // routing keys of that time went nowhere): it routes each to the worker that cached it.
  for (const [p, w] of away) assert.equal(await complete(c, p), w, 'a prefix cached while NATS was away is routed to its worker');

  for (const s of [a, b, c]) {
    await eventually(async () => sum(await series(s, 'worker_active_requests')) === 0, 'load returns to 0 on every replica');
    for (const [w, n] of await series(s, 'worker_active_requests')) assert.equal(n, 0, `worker ${w}: no negative or leftover load`);
  }
  // And the replicas still route and serve.
  await complete(b, prompt('after'));
});
