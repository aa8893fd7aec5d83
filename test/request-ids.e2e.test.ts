// The client's x-request-id is echoed and logged, never used as the engine's request id:
// two clients that send the same id each get their own generation, and one of them
// going away aborts only its own engine request. A real Portico
// process in front of an in-process mock engine, which records the ids it was sent and
// counts the aborts it applied.

import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Model } from '../src/native/core.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';

let engine: MockEngine;
let server: Proc;

async function start(protocol: 'sglang' | 'vllm'): Promise<void> {
  const info = Model.load(QWEN3).info();
  // echo streams the prompt back one token per 5 ms step: a long prompt is a stream that
  // runs for seconds, long past the other requests' round trips.
  engine = await startMockEngine({ port: 0, mode: 'echo', protocol, stepMs: 5, eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: 'm' });
  server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', engine.url, '--log-format', 'json', '--log-requests']);
}

async function stop(): Promise<void> {
  await server?.stop();
  await engine?.close();
}

/** A streaming chat completion whose answer is `text` (echo, raw prompt), read event by event. */
class ChatStream {
  text = '';
  finish: string | null = null;
  done = false;
  requestId: string | null = null;
  status = 0;
  private buf = '';
  private reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  private readonly decoder = new TextDecoder();
  readonly ac = new AbortController();

  static async open(text: string, requestId: string): Promise<ChatStream> {
    const s = new ChatStream();
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: text }], nvext: { use_raw_prompt: true } }),
      signal: s.ac.signal,
    });
    s.status = res.status;
    s.requestId = res.headers.get('x-request-id');
    assert.equal(res.status, 200, `stream opened: ${res.status}`);
    s.reader = res.body!.getReader();
    return s;
  }

  /** Reads until at least one more content delta arrived or the stream ended; false once ended. */
  async step(): Promise<boolean> {
    const before = this.text.length;
    while (!this.done && this.text.length === before) {
      const { value, done } = await this.reader!.read();
      if (done) {
        this.done = true;
        break;
      }
      this.buf += this.decoder.decode(value, { stream: true });
      let i;
      while ((i = this.buf.indexOf('\n\n')) >= 0) {
        const event = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 2);
        const data = event.split('\n').find((l) => l.startsWith('data: '))?.slice(6);
        if (data === undefined || data === '[DONE]') continue;
        const chunk = JSON.parse(data) as { error?: unknown; choices: { delta: { content?: string }; finish_reason: string | null }[] };
        assert.equal(chunk.error, undefined, `no error event: ${data}`);
        for (const c of chunk.choices) {
          this.text += c.delta.content ?? '';
          if (c.finish_reason) this.finish = c.finish_reason;
        }
      }
    }
    return !this.done;
  }

  async rest(): Promise<void> {
    while (await this.step());
  }
}

function engineIdsStartingWith(prefix: string): string[] {
  return engine.context.received.all().map((r) => r.requestId).filter((id) => id.startsWith(prefix));
}

async function until(what: string, cond: () => boolean): Promise<void> {
  // A hang guard only: the condition is an event (a count the engine keeps), not a time window.
  const deadline = Date.now() + 30_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

for (const protocol of ['sglang', 'vllm'] as const) {
  describe(protocol, () => {
    before(() => start(protocol));
    after(stop);

    test('two streams with the same x-request-id both complete, and aborting a third leaves them running', async () => {
      const id = 'same-client-id';
      const longText = 'alpha '.repeat(1200).trim();
      const shortText = 'beta gamma delta';

      const a = await ChatStream.open(longText, id);
      assert.ok(await a.step(), 'A is streaming');

      // B, same id, while A runs: before the fix the engine refused it (AlreadyExists, a 502)
      // and the clean-up Abort of that id ended A.
      const b = await ChatStream.open(shortText, id);
      await b.rest();
      assert.equal(b.text, shortText, 'B got its own text');
      assert.equal(b.finish, 'stop');
      assert.equal(b.requestId, id, 'the client id is echoed');
      const afterB = a.text.length;
      assert.ok(await a.step(), 'A is still streaming after B completed');
      assert.ok(a.text.length > afterB);

      // C, same id, goes away mid-stream: the engine applies one abort, and it is C's.
      const abortsBefore = engine.context.stats.aborts;
      const c = await ChatStream.open(longText, id);
      assert.ok(await c.step(), 'C is streaming');
      c.ac.abort();
      await until('the engine to apply C\'s abort', () => engine.context.stats.aborts === abortsBefore + 1);
      const afterAbort = a.text.length;
      assert.ok(await a.step(), 'A is still streaming after C was aborted');
      assert.ok(a.text.length > afterAbort);

      await a.rest();
      assert.equal(a.text, longText, 'A got its own whole text');
      assert.equal(a.finish, 'stop', 'A was not aborted');
      assert.equal(a.requestId, id);
      assert.equal(engine.context.stats.aborts, abortsBefore + 1, 'only C was aborted');

      const ids = engineIdsStartingWith(id);
      assert.equal(ids.length, 3, `the engine saw three requests: ${ids.join(', ')}`);
      assert.equal(new Set(ids).size, 3, 'with three different ids');
      assert.ok(!ids.includes(id), 'none of them is the client\'s id verbatim');

      // The request log names the engine id beside the client's, for operators to correlate.
      await until('the request log lines', () => requestLines(id).length >= 3);
      const logged = requestLines(id);
      const engineIds = new Set(logged.map((l) => l.engine_request_id));
      assert.deepEqual([...engineIds].sort(), [...ids].sort(), 'each request\'s log line names its engine id');
    });

    function requestLines(id: string): Record<string, unknown>[] {
      return server
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === 'request' && l.request_id === id);
    }

    test('batched completion prompts with the same x-request-id get distinct engine ids per prompt and per request', async () => {
      const id = 'batch-client-id';
      const send = (prompt: string[]) =>
        fetch(`${server.url}/v1/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': id },
          body: JSON.stringify({ model: 'm', prompt, max_tokens: 4 }),
        }).then(async (r) => ({ status: r.status, header: r.headers.get('x-request-id'), json: (await r.json()) as { choices: { index: number; text: string }[] } }));
      const [r1, r2] = await Promise.all([send(['one two', 'three four']), send(['five six', 'seven eight'])]);
      for (const [r, texts] of [[r1, ['one two', 'three four']], [r2, ['five six', 'seven eight']]] as const) {
        assert.equal(r.status, 200);
        assert.equal(r.header, id);
        assert.deepEqual(r.json.choices.sort((x, y) => x.index - y.index).map((c) => c.text), texts);
      }
      const ids = engineIdsStartingWith(id);
      assert.equal(ids.length, 4, `one engine request per prompt: ${ids.join(', ')}`);
      assert.equal(new Set(ids).size, 4);
    });

    test('without x-request-id the generated id is both the echoed one and the engine\'s', async () => {
      const r = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'own id' }], nvext: { use_raw_prompt: true } }),
      });
      assert.equal(r.status, 200);
      const id = r.headers.get('x-request-id')!;
      assert.match(id, /^[0-9a-f-]{36}$/);
      assert.deepEqual(engineIdsStartingWith(id), [id]);
    });
  });
}
