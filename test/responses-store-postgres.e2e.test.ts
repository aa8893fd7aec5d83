// Two `portico serve` frontends sharing one PostgreSQL store (a real server from Debian's
// postgresql, started here): a chain begun on one continues on the other, streaming and
// not; a delete on one is seen by the other; tenants stay apart across them; a frontend
// serving another model cannot continue this model's chain. Both apply the migrations at
// startup together (once, under the advisory lock). With PostgreSQL stopped under a running
// server, every store use is a 503 store_unavailable (an error event on a stream) while the
// rest keeps serving, and once it is back the same server stores and continues chains again.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import pg from 'pg';
import { QWEN3, startPortico, type Proc } from './helpers/portico.js';
import { eventually } from './helpers/eventually.js';
import { startPostgres, type Postgres } from './helpers/postgres.js';

let db: Postgres;
let a: Proc;
let b: Proc;
let other: Proc;

const args = (model: string, url: string) => ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', model, '--mock', 'echo', '--mock-workers', '1', '--api-key', 'k1', '--api-key', 'k2', '--responses-store', url];

before(async () => {
  db = await startPostgres();
  [a, b] = await Promise.all([startPortico(args('qwen3', db.url)), startPortico(args('qwen3', db.url))]);
  other = await startPortico(args('other', db.url));
});

after(async () => {
  await Promise.all([a?.stop(), b?.stop(), other?.stop()]);
  await db?.stop();
});

const sdk = (p: Proc, key = 'k1') => new OpenAI({ baseURL: `${p.url}/v1`, apiKey: key, maxRetries: 0 });
const notFound = (e: unknown) => e instanceof OpenAI.NotFoundError;

test('a chain started on one frontend continues on the other, and a delete on either is seen by both', async () => {
  const t1 = await sdk(a).responses.create({ model: 'qwen3', instructions: 'Be brief.', input: 'one' });
  const got = await sdk(b).responses.retrieve(t1.id);
  assert.deepEqual(got.output, t1.output);
  const stream = await sdk(b).responses.create({ model: 'qwen3', input: 'two', previous_response_id: t1.id, stream: true });
  let t2: OpenAI.Responses.Response | undefined;
  for await (const ev of stream) {
    if (ev.type === 'response.completed') {
      t2 = ev.response;
      // Stored before completed was sent: the other frontend already reads it.
      assert.equal((await sdk(a).responses.retrieve(ev.response.id)).id, ev.response.id);
    }
  }
  assert.ok(t2);
  const t3 = await sdk(a).responses.create({ model: 'qwen3', input: 'three', previous_response_id: t2.id });
  assert.ok(t3.usage!.input_tokens > t2.usage!.input_tokens);
  assert.deepEqual((await sdk(b).responses.inputItems.list(t3.id)).data.map((i) => (i.type === 'message' ? (i.content[0] as { text: string }).text : '')), ['three']);

  await sdk(b).responses.delete(t2.id);
  await assert.rejects(sdk(a).responses.retrieve(t2.id), notFound);
  await assert.rejects(sdk(a).responses.create({ model: 'qwen3', input: 'four', previous_response_id: t3.id }), notFound);
});

test('tenants stay apart across frontends; another model cannot continue the chain', async () => {
  const r = await sdk(a, 'k1').responses.create({ model: 'qwen3', input: 'mine' });
  await assert.rejects(sdk(b, 'k2').responses.retrieve(r.id), notFound);
  await assert.rejects(sdk(b, 'k2').responses.create({ model: 'qwen3', input: 'x', previous_response_id: r.id }), notFound);
  await assert.rejects(sdk(other, 'k1').responses.create({ model: 'other', input: 'x', previous_response_id: r.id }), notFound);
  assert.equal((await sdk(other, 'k1').responses.retrieve(r.id)).id, r.id, 'retrieve is per key, across models');
});

test('the schema is migrated once and rows hold no API key', async () => {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const m = await c.query<{ version: number }>('SELECT version FROM portico_schema_migrations ORDER BY version');
    assert.deepEqual(m.rows.map((r) => r.version), [1]);
    const t = await c.query<{ tenant: string }>('SELECT DISTINCT tenant FROM portico_responses');
    assert.ok(t.rows.length >= 1);
    for (const row of t.rows) assert.match(row.tenant, /^[0-9a-f]{32}$/, 'a digest, not the key');
  } finally {
    await c.end();
  }
});

test('PostgreSQL stopped under a running server: store uses are 503 store_unavailable, the rest serves; after it comes back the same server stores again', async () => {
  const own = await startPostgres();
  const p = await startPortico(args('qwen3', own.url));
  const unavailable = (e: unknown) => e instanceof OpenAI.APIError && e.status === 503 && e.code === 'store_unavailable';
  try {
    const c = sdk(p);
    const t1 = await c.responses.create({ model: 'qwen3', input: 'before the outage' });
    await own.halt();

    await assert.rejects(c.responses.create({ model: 'qwen3', input: 'during' }), unavailable, 'a stored response that cannot be written is not answered');
    await assert.rejects(c.responses.retrieve(t1.id), unavailable);
    await assert.rejects(c.responses.create({ model: 'qwen3', input: 'more', previous_response_id: t1.id }), unavailable);
    const res = await fetch(`${p.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k1' }, body: JSON.stringify({ model: 'qwen3', input: 'streamed during', stream: true }) });
    const sse = await res.text();
    assert.match(sse, /event: error\n[^\n]*store_unavailable/, 'a stream ends with an error event');
    assert.ok(!sse.includes('response.completed'), 'no completed event for a response that was not stored');
    // What needs no store is served throughout.
    assert.equal((await c.responses.create({ model: 'qwen3', input: 'not stored', store: false })).status, 'completed');
    assert.equal((await c.chat.completions.create({ model: 'qwen3', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 })).object, 'chat.completion');

    await own.resume();
    // The pool reconnects on its next query (src/store/postgres.ts): wait for that event.
    let t2: OpenAI.Responses.Response | undefined;
    await eventually(async () => {
      try {
        t2 = await c.responses.create({ model: 'qwen3', input: 'after the outage', previous_response_id: t1.id });
        return true;
      } catch (e) {
        if (unavailable(e)) return false;
        throw e;
      }
    }, 'the server stores again once PostgreSQL is back');
    assert.equal(t2!.previous_response_id, t1.id, 'the chain stored before the outage continues');
    assert.ok(t2!.usage!.input_tokens > t1.usage!.input_tokens);
    assert.equal((await c.responses.retrieve(t2!.id)).id, t2!.id);
  } finally {
    await p.stop();
    await own.stop();
  }
});
