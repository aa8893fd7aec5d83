// The Responses store as a server runs it: per-API-key tenants (one key never reads,
// deletes, lists or continues another's responses), persistence across a restart on the
// SQLite file, the max-rows flag, and the startup errors of bad --responses-store values.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { QWEN3, runPortico, startPortico, type Proc } from './helpers/portico.js';

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
