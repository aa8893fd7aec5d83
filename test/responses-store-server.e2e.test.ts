// The Responses store as a server runs it: per-API-key tenants (one key never reads,
// deletes, lists or continues another's responses), persistence across a restart on the
// SQLite file, the max-rows and TTL flags, the startup errors of bad --responses-store
// values, and a chain's turns routed (KV-aware, the default) to the worker holding its
// predecessor's prefix with --router-mode kv, read from in-process sim engines' received logs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Model } from '../src/native/core.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { QWEN3, runPortico, startPortico, type Proc } from './helpers/portico.js';
import { eventually } from './helpers/eventually.js';

const MODEL = 'qwen3';
const BASE = ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo', '--mock-workers', '1'];

function client(p: Proc, key: string): OpenAI {
  return new OpenAI({ baseURL: `${p.url}/v1`, apiKey: key, maxRetries: 0 });
}

const notFound = (e: unknown) => e instanceof OpenAI.NotFoundError;

test('tenants: each API key sees only its own responses; they survive a restart on the SQLite file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'portico-responses-'));
  const args = [...BASE, '--api-key', 'key-a', '--api-key', 'key-b', '--responses-store', `sqlite:${join(dir, 'store.db')}`];
  let p = await startPortico(args);
  try {
    let a = client(p, 'key-a');
    let b = client(p, 'key-b');
    const r1 = await a.responses.create({ model: MODEL, input: 'tenant a, turn one' });
    const stream = await a.responses.create({ model: MODEL, input: 'tenant a, turn two', previous_response_id: r1.id, stream: true });
    let r2 = '';
    for await (const ev of stream) if (ev.type === 'response.completed') r2 = ev.response.id;
    assert.ok(r2);

    for (const id of [r1.id, r2]) {
      await assert.rejects(b.responses.retrieve(id), notFound);
      await assert.rejects(b.responses.inputItems.list(id), notFound);
      await assert.rejects(b.responses.create({ model: MODEL, input: 'x', previous_response_id: id }), notFound);
      await assert.rejects(b.responses.delete(id), notFound);
    }
    await assert.rejects(client(p, 'key-c').responses.retrieve(r1.id), (e: unknown) => e instanceof OpenAI.AuthenticationError);
    const own = await b.responses.create({ model: MODEL, input: 'tenant b' });
    await assert.rejects(a.responses.retrieve(own.id), notFound);
    assert.equal((await a.responses.retrieve(r2)).previous_response_id, r1.id, 'b\'s deletes did not touch a\'s rows');

    // Restart on the same file: everything is still there, tenants still apart.
    await p.stop();
    p = await startPortico(args);
    a = client(p, 'key-a');
    b = client(p, 'key-b');
    const again = await a.responses.retrieve(r2);
    assert.equal(again.status, 'completed');
    assert.equal(again.previous_response_id, r1.id);
    const t3 = await a.responses.create({ model: MODEL, input: 'after the restart', previous_response_id: r2 });
    assert.equal(t3.previous_response_id, r2);
    assert.ok(t3.usage!.input_tokens > again.usage!.input_tokens, 'the restored chain is in the prompt');
    assert.equal((await b.responses.retrieve(own.id)).id, own.id);
    await assert.rejects(b.responses.retrieve(r1.id), notFound);
  } finally {
    await p.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--responses-store-max-rows keeps the newest responses', async () => {
  const p = await startPortico([...BASE, '--responses-store', 'sqlite::memory:', '--responses-store-max-rows', '2']);
  try {
    const c = client(p, 'unused');
    const ids: string[] = [];
    for (const input of ['one', 'two', 'three']) ids.push((await c.responses.create({ model: MODEL, input })).id);
    await assert.rejects(c.responses.retrieve(ids[0]!), notFound);
    assert.equal((await c.responses.retrieve(ids[1]!)).id, ids[1]);
    assert.equal((await c.responses.retrieve(ids[2]!)).id, ids[2]);
  } finally {
    await p.stop();
  }
});

test('--responses-store-ttl-secs: a response past its TTL is a 404 on retrieve, input_items and previous_response_id; newer ones are still served', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'portico-responses-ttl-'));
  const p = await startPortico([...BASE, '--responses-store', `sqlite:${join(dir, 'store.db')}`, '--responses-store-ttl-secs', '1']);
  try {
    const c = client(p, 'unused');
    const old = await c.responses.create({ model: MODEL, input: 'expires' });
    assert.equal(old.status, 'completed');
    // Wait for the expiry (the bound is a hang guard, not a window): retrieve until it is gone.
    await eventually(async () => {
      try {
        await c.responses.retrieve(old.id);
        return false;
      } catch (e) {
        if (notFound(e)) return true;
        throw e;
      }
    }, 'the response expires after --responses-store-ttl-secs 1');
    await assert.rejects(c.responses.inputItems.list(old.id), notFound);
    await assert.rejects(c.responses.create({ model: MODEL, input: 'continue', previous_response_id: old.id }), (e: unknown) => notFound(e) && (e as InstanceType<typeof OpenAI.APIError>).param === 'previous_response_id');
    // The server goes on storing: a new response is served (and chained) right away.
    const fresh = await c.responses.create({ model: MODEL, input: 'new' });
    const next = await c.responses.create({ model: MODEL, input: 'next', previous_response_id: fresh.id });
    assert.equal(next.previous_response_id, fresh.id);
  } finally {
    await p.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a chained request (previous_response_id, 4 turns, 3 chains) reaches the worker its predecessor ran on under --router-mode kv (docs/responses.md), and reports cached tokens', async () => {
  const info = Model.load(QWEN3).info();
  const engines: MockEngine[] = [];
  for (let i = 0; i < 3; i++) engines.push(await startMockEngine({ port: 0, mode: 'sim', eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: MODEL, speedupRatio: 20 }));
  const p = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--router-mode', 'kv', '--responses-store', 'sqlite::memory:', ...engines.flatMap((e) => ['--worker', e.url])]);
  try {
    const c = client(p, 'unused');
    /** Blocks the router has indexed from the workers' KV events (every worker together). */
    const indexed = async () => {
      const text = await (await fetch(`${p.url}/metrics`)).text();
      let n = 0;
      for (const m of text.matchAll(/^portico_frontend_worker_kv_blocks\{model="qwen3",[^}]*\} (\d+)/gm)) n += Number(m[1]);
      return n;
    };
    const workerOf = (id: string) => {
      const hits = engines.filter((e) => e.context.received.find(id));
      assert.equal(hits.length, 1, `one worker received ${id}`);
      return engines.indexOf(hits[0]!);
    };
    let seq = 0;
    const turn = async (input: string, previous?: string, pin?: number) => {
      const id = `chain-${++seq}`;
      const before = await indexed();
      const headers: Record<string, string> = { 'x-request-id': id };
      if (pin !== undefined) headers['x-dynamo-worker-instance-id'] = String(pin);
      const r = await c.responses.create({ model: MODEL, input, max_output_tokens: 6, ...(previous ? { previous_response_id: previous } : {}) }, { headers });
      // Wait for the event the router routes by: this turn's blocks indexed from the worker's KV events.
      await eventually(async () => (await indexed()) > before, `the KV events of ${id} reach the router`);
      return { r, worker: workerOf(id) };
    };
    const topics = ['the history of the printing press in Europe', 'how tides follow the moon and the sun', 'why bread dough rises when it is left warm'];
    // Each chain's first turn is pinned to its own worker (idle workers with no shared prefix
    // tie, and a tie would put every chain on one worker); the later turns are routed freely.
    const firsts = new Set<number>();
    for (const [i, topic] of topics.entries()) {
      let t = await turn(`Tell me, in some detail and at a leisurely pace, about ${topic}; take your time.`, undefined, i);
      firsts.add(t.worker);
      for (let k = 2; k <= 4; k++) {
        const next = await turn(`Turn ${k}: go on about ${topic}.`, t.r.id);
        assert.equal(next.worker, t.worker, `turn ${k} of "${topic}" ran on its predecessor's worker`);
        assert.ok((next.r.usage!.input_tokens_details?.cached_tokens ?? 0) > 0, `turn ${k} reports cached prompt tokens`);
        t = next;
      }
    }
    assert.equal(firsts.size, 3, `the chains started on three different workers (${[...firsts]})`);
  } finally {
    await p.stop();
    for (const e of engines) await e.close();
  }
});

test('--responses-store off: nothing is stored, store echoes false, previous_response_id is a 400', async () => {
  const p = await startPortico([...BASE, '--responses-store', 'off']);
  try {
    const c = client(p, 'unused');
    const r = await c.responses.create({ model: MODEL, input: 'x' });
    assert.equal((r as unknown as { store: boolean }).store, false);
    await assert.rejects(c.responses.create({ model: MODEL, input: 'x', previous_response_id: r.id }), (e: unknown) => e instanceof OpenAI.BadRequestError && e.param === 'previous_response_id');
    await assert.rejects(c.responses.retrieve(r.id), (e: unknown) => e instanceof OpenAI.BadRequestError);
    assert.equal((await c.responses.create({ model: MODEL, input: 'still serving' })).status, 'completed');
  } finally {
    await p.stop();
  }
});

test('bad --responses-store values are startup errors naming the flag', async () => {
  for (const [extra, message] of [
    [['--responses-store', 'mysql://x'], /--responses-store must be sqlite:PATH/],
    [['--responses-store', 'sqlite:'], /needs a path/],
    [['--responses-store', 'sqlite::memory:', '--shards', '2'], /one thread/],
  ] as const) {
    const r = await runPortico([...BASE, ...extra]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr + r.stdout, message);
  }
});
