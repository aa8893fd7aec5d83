// Two frontend replicas on one real etcd: a killed worker is dropped by both. Three echo workers register themselves with a 2 s lease; one is
// SIGKILLed, so nothing revokes its lease: etcd deletes its key when the lease expires
// (the test watches etcd for that delete), and both frontends drop the worker on that
// event, while the other two keep serving requests from the openai SDK on both. The
// killed worker, restarted on the same port, rejoins both replicas. Also: the
// multi-endpoint form `etcd://H:P,H:P` with the first endpoint dead still discovers.

import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { Etcd3 } from 'etcd3';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';
import { startEtcd, type EtcdServer } from './helpers/etcd.js';
import { eventually } from './helpers/eventually.js';
import { freePort } from './helpers/free-port.js';

const TTL_SECS = 2;
/** A hang guard far above the lease TTL (etcd checks expiry about every 500 ms). */
const LEASE_GUARD_MS = 15_000;

let etcd: EtcdServer;
before(async () => {
  etcd = await startEtcd();
});
after(async () => {
  await etcd?.destroy();
});

const serve = (ns: string, discovery = etcd.url) => startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--discovery', discovery, '--namespace', ns]);
const engine = (ns: string, port = 0, discovery = etcd.url) => startPortico(['mock-engine', '--port', String(port), '--model-path', QWEN3, '--mode', 'echo', '--register', discovery, '--model-name', 'm', '--namespace', ns, '--lease-ttl-secs', String(TTL_SECS)]);

async function urls(s: Proc, healthyOnly = false): Promise<string[]> {
  const j = (await (await fetch(`${s.url}/admin/workers`)).json()) as any;
  return (j.models[0].workers as { url: string; healthy: boolean }[]).filter((w) => !healthyOnly || w.healthy).map((w) => w.url).sort();
}

async function chat(s: Proc, content: string): Promise<string> {
  const c = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: 'none', maxRetries: 0 });
  const r = await c.chat.completions.create({ model: 'm', messages: [{ role: 'user', content }], nvext: { use_raw_prompt: true } } as any);
  return (r as any).choices[0].message.content;
}

test('two replicas on one etcd drop a killed worker when its lease expires, keep serving, and take it back', async (t) => {
  const ns = 'replicas';
  const a = await serve(ns);
  t.after(() => a.stop());
  const b = await serve(ns);
  t.after(() => b.stop());
  const workers: Proc[] = [];
  for (let i = 0; i < 3; i++) workers.push(await engine(ns));
  t.after(async () => {
    for (const w of workers) await w.stop();
  });
  const all = workers.map((w) => w.url).sort();
  for (const s of [a, b]) await eventually(async () => (await urls(s, true)).join() === all.join(), 'every registered worker joins both replicas, healthy');
  for (const s of [a, b]) for (let i = 0; i < 3; i++) assert.equal(await chat(s, `hello ${i}`), `hello ${i}`);

  // Watch etcd itself for the killed worker's key going away: the event the replicas follow.
  const client = new Etcd3({ hosts: etcd.url.replace('etcd://', 'http://') });
  t.after(() => client.close());
  const watcher = await client.watch().prefix(`${ns}/workers/`).create();
  t.after(() => watcher.cancel());
  const victim = workers[0]!;
  const keyOf = async () => {
    for (const [k, v] of Object.entries(await client.getAll().prefix(`${ns}/workers/`).strings())) if (JSON.parse(v).url === victim.url) return k;
    return undefined;
  };
  const victimKey = await keyOf();
  assert.ok(victimKey, 'the victim is registered in etcd');
  const deleted = new Promise<number>((done) => watcher.on('delete', (kv) => kv.key.toString() === victimKey && done(Date.now())));

  const killedAt = Date.now();
  victim.child.kill('SIGKILL');
  const deletedAt = await Promise.race([deleted, new Promise<never>((_, no) => setTimeout(() => no(new Error(`etcd did not expire the lease within ${LEASE_GUARD_MS} ms`)), LEASE_GUARD_MS).unref())]);
  t.diagnostic(`etcd deleted the killed worker's key ${deletedAt - killedAt} ms after SIGKILL (lease TTL ${TTL_SECS} s)`);
  const rest = all.filter((u) => u !== victim.url);
  for (const s of [a, b]) await eventually(async () => (await urls(s)).join() === rest.join(), 'both replicas drop the killed worker once its lease expired', LEASE_GUARD_MS);
  t.diagnostic(`both replicas dropped it ${Date.now() - killedAt} ms after SIGKILL`);
  // The rest serve every request on both replicas (the echo engine answers with the prompt).
  for (const s of [a, b]) for (let i = 0; i < 6; i++) assert.equal(await chat(s, `after the kill ${i}`), `after the kill ${i}`);
  const h = (await (await fetch(`${a.url}/health`)).json()) as any;
  assert.equal(h.discovery.workers, 2);

  // Restarted on the same port (the same URL): it registers again and rejoins both.
  const port = Number(new URL(victim.url.replace('grpc://', 'http://')).port);
  const again = await engine(ns, port);
  workers[0] = again;
  assert.equal(again.url, victim.url);
  for (const s of [a, b]) await eventually(async () => (await urls(s, true)).join() === all.join(), 'the restarted worker rejoins both replicas');
  for (const s of [a, b]) assert.equal((await urls(s)).length, 3, 'no duplicate entry for the rejoined URL');
  for (const s of [a, b]) for (let i = 0; i < 6; i++) assert.equal(await chat(s, `rejoined ${i}`), `rejoined ${i}`);
});

test('etcd://H:P,H:P with a dead first endpoint still discovers and registers', async (t) => {
  const ns = 'multi-endpoint';
  const dead = `127.0.0.1:${await freePort()}`;
  const both = `etcd://${dead},${etcd.url.replace('etcd://', '')}`;
  const s = await serve(ns, both);
  t.after(() => s.stop());
  const w = await engine(ns, 0, both);
  t.after(() => w.stop());
  await eventually(async () => (await urls(s, true)).join() === w.url, 'the worker registered through the multi-endpoint form joins');
  assert.equal(await chat(s, 'two endpoints'), 'two endpoints');
  const h = (await (await fetch(`${s.url}/health`)).json()) as any;
  assert.equal(h.discovery.connected, true);
});
