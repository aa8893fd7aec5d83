// Two frontend replicas on one event plane (a real nats-server) draw on one budget per
// key: what one admits is taken from the other's budget once its usage message arrives
// (the test waits for that in /health's rate_limit_sync, never for time), and requests in
// flight through one count against the key's concurrent limit on the other. With NATS
// away each replica enforces every limit alone (a key can then spend up to replicas x its
// limit, the documented bound) and neither stops serving.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { QWEN3, startPortico, type Proc } from './helpers/portico.js';
import { startNats } from './helpers/nats.js';
import { eventually } from './helpers/eventually.js';
import { connect } from '@nats-io/transport-node';
import { keyId } from '../src/limits/key-limits.js';

const MODEL = 'm';
/** A window no test outlives: nothing refills while it runs. */
const LONG = 1_000_000;

function configFile(config: object): string {
  const file = `${mkdtempSync(`${tmpdir()}/portico-rate-replicas-`)}/config.json`;
  writeFileSync(file, JSON.stringify(config));
  return file;
}

function replica(nats: string, config: string, mock: 'echo' | 'sim' = 'echo'): Promise<Proc> {
  return startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', mock, '--mock-workers', '1', '--event-plane', nats, '--replica-sync-expiry-secs', '2', '--config', config]);
}

async function chat(s: Proc, key: string, body: object = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(`${s.url}/v1/chat/completions`, { method: 'POST', signal, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1, ...body }) });
}

async function status(s: Proc, key: string): Promise<number> {
  const r = await chat(s, key);
  await r.text();
  return r.status;
}

interface SyncView {
  peers: number;
  requests_applied: number;
  tokens_applied: number;
}

async function sync(s: Proc): Promise<SyncView | undefined> {
  const h = (await (await fetch(`${s.url}/health`)).json()) as { event_plane?: { connected: boolean; rate_limit_sync?: SyncView } };
  return h.event_plane?.rate_limit_sync;
}

async function connected(s: Proc): Promise<boolean> {
  const h = (await (await fetch(`${s.url}/health`)).json()) as { event_plane?: { connected: boolean } };
  return h.event_plane?.connected === true;
}

test('two replicas share one budget per key: requests admitted by one are refused by the other', async (t) => {
  const nats = await startNats();
  t.after(() => nats.stop());
  const config = configFile({ 'api-key': ['sk-a', 'sk-b'], 'rate-limits': [{ key: '*', 'requests-per-minute': 4 }], 'rate-limit-window-secs': LONG });
  const a = await replica(nats.url, config);
  t.after(() => a.stop());
  const b = await replica(nats.url, config);
  t.after(() => b.stop());

  for (let i = 0; i < 3; i++) assert.equal(await status(a, 'sk-a'), 200);
  await eventually(async () => (await sync(b))?.requests_applied === 3, "B took A's 3 requests from sk-a's budget");
  assert.equal(await status(b, 'sk-a'), 200);
  const refused = await chat(b, 'sk-a');
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('x-ratelimit-remaining-requests'), '0');
  await refused.text();
  // And back: A hears of B's one and is at the limit too.
  await eventually(async () => (await sync(a))?.requests_applied === 1, "A took B's request from sk-a's budget");
  assert.equal(await status(a, 'sk-a'), 429);
  // The other key's budget is untouched on both.
  const other = await chat(b, 'sk-b');
  assert.equal(other.status, 200);
  assert.equal(other.headers.get('x-ratelimit-remaining-requests'), '3');
  await other.text();
});

test('two replicas: a stream in flight through one holds a place of the key on the other', async (t) => {
  const nats = await startNats();
  t.after(() => nats.stop());
  const config = configFile({ 'rate-limits': [{ key: '*', 'concurrent-requests': 1 }] });
  const a = await replica(nats.url, config, 'sim');
  t.after(() => a.stop());
  const b = await replica(nats.url, config, 'sim');
  t.after(() => b.stop());
  const ac = new AbortController();
  // A stream that runs for seconds (600 tokens at the sim engine's 20 ms a step), open once its head is read.
  const stream = await chat(a, 'k', { stream: true, max_tokens: 600, ignore_eos: true }, ac.signal);
  assert.equal(stream.status, 200);
  await eventually(async () => (await sync(b))?.peers === 1, 'B hears from A');
  await eventually(async () => (await status(b, 'k')) === 429, "B counts A's stream against the key's one place");
  ac.abort();
  await eventually(async () => (await status(b, 'k')) === 200, "B admits once A's stream ended");
});

test('NATS away: each replica enforces the limits alone (at most replicas x the limit) and neither stops serving', async (t) => {
  const nats = await startNats();
  t.after(() => nats.stop());
  const config = configFile({ 'rate-limits': [{ key: '*', 'requests-per-minute': 2 }], 'rate-limit-window-secs': LONG });
  const a = await replica(nats.url, config);
  t.after(() => a.stop());
  const b = await replica(nats.url, config);
  t.after(() => b.stop());
  await eventually(async () => (await connected(a)) && (await connected(b)), 'both connected');
  await nats.stop();
  await eventually(async () => !(await connected(a)) && !(await connected(b)), 'both see NATS gone');
  // Each admits the key's whole limit on its own, then refuses: 2 x 2 in all, no more.
  assert.deepEqual([await status(a, 'k'), await status(a, 'k'), await status(a, 'k')], [200, 200, 429]);
  assert.deepEqual([await status(b, 'k'), await status(b, 'k'), await status(b, 'k')], [200, 200, 429]);
  // The server goes on answering everything else.
  assert.equal((await fetch(`${a.url}/health`)).status, 200);
});

test('garbage on the rate-limit subject is ignored; a well-formed message from a replica is applied', async (t) => {
  const nats = await startNats();
  t.after(() => nats.stop());
  const config = configFile({ 'api-key': ['sk-a'], 'rate-limits': [{ key: '*', 'requests-per-minute': 5 }], 'rate-limit-window-secs': LONG });
  const a = await replica(nats.url, config);
  t.after(() => a.stop());
  const nc = await connect({ servers: nats.url.replace('nats://', '') });
  t.after(() => nc.close());
  const subject = 'portico.ratelimit.usage';
  nc.publish(subject, 'not json');
  nc.publish(subject, JSON.stringify({ replica: 'x', seq: 1, keys: [[keyId('sk-a'), -5, 1, 0]] }));
  nc.publish(subject, JSON.stringify({ replica: 'x', seq: 1, keys: [[keyId('sk-a'), 1, 1, 0], [keyId('sk-a'), 1, 1, 0]] }));
  nc.publish(subject, JSON.stringify({ replica: 'x', seq: 1, keys: [['someone-unknown', 4, 0, 0]] }));
  // A replica 'y' spent 3 of sk-a's 5 (and the same message again, which is ignored).
  const good = JSON.stringify({ replica: 'y', seq: 1, keys: [[keyId('sk-a'), 3, 0, 0]] });
  nc.publish(subject, good);
  nc.publish(subject, good);
  // A last message, behind the others on the one connection: once it is applied, so is everything before it.
  nc.publish(subject, JSON.stringify({ replica: 'z', seq: 1, keys: [[keyId('sk-a'), 0, 1, 0]] }));
  await nc.flush();
  await eventually(async () => (await sync(a))?.tokens_applied === 1, 'the last message is applied');
  assert.equal((await sync(a))?.requests_applied, 3, 'the well-formed message is applied once, the malformed ones not at all');
  const r = await chat(a, 'sk-a');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('x-ratelimit-remaining-requests'), '1');
  await r.text();
});
