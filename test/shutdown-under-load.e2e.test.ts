// SIGTERM under a streaming load with --shards 2: streams being read
// while new requests keep arriving. Every in-flight stream either runs to its end or, past
// --shutdown-timeout-secs, is cut by the server (its connection closed); new requests get
// 503 shutting_down (with Retry-After) or are refused once the port is closed; the process
// exits 0, never by a signal, never with std::bad_alloc or another C++ abort (seen before
// when shard threads called uWS App.close()).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { QWEN3, startPortico } from './helpers/portico.js';

const ARGS = ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--shards', '2', '--mock', 'sim', '--mock-workers', '2'];

function chat(url: string, body: object): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }], ...body }) });
}

/** Read a stream to its end; 'done' when it ended with [DONE], 'cut' when the server closed it first. */
async function readStream(r: Response): Promise<{ end: 'done' | 'cut'; text: string }> {
  let text = '';
  const reader = r.body!.getReader();
  const dec = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
    }
  } catch {
    return { end: 'cut', text };
  }
  return { end: text.endsWith('data: [DONE]\n\n') ? 'done' : 'cut', text };
}

for (const [label, timeoutSecs, tokens] of [
  ['streams shorter than the shutdown timeout finish', 30, 60],
  ['streams longer than the shutdown timeout are cut cleanly', 1, 2000],
] as const) {
  test(`SIGTERM with --shards 2 under a streaming load: ${label}; exit 0, no abort`, async (t) => {
    const s = await startPortico([...ARGS, '--shutdown-timeout-secs', String(timeoutSecs)], { PORTICO_SHARDS: '2' });
    t.after(() => s.stop());
    const exited = once(s.child, 'exit');

    const streams = await Promise.all(Array.from({ length: 24 }, () => chat(s.url, { stream: true, max_tokens: tokens, ignore_eos: true })));
    for (const r of streams) assert.equal(r.status, 200);
    const reads = streams.map(readStream);

    // New work keeps arriving while the server drains, until the port is closed.
    let refusedConnections = 0;
    const statuses = new Map<number, number>();
    let stop = false;
    const arrivals = (async () => {
      while (!stop) {
        try {
          const r = await chat(s.url, { max_tokens: 1 });
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          if (r.status === 503) {
            assert.match(r.headers.get('retry-after') ?? '', /^\d+$/);
            assert.equal((await r.json()).error.code, 'shutting_down');
          } else await r.text();
        } catch {
          refusedConnections++;
          if (s.child.exitCode !== null || refusedConnections > 50) break;
        }
      }
    })();

    s.child.kill('SIGTERM');
    const ends = await Promise.all(reads);
    stop = true;
    await arrivals;
    const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    const out = s.output();
    assert.doesNotMatch(out, /bad_alloc|terminate called|uv_loop_close\(\) while having open handles|Assertion/, 'no C++ abort');
    assert.equal(signal, null, `exited by a signal: ${out.slice(-2000)}`);
    assert.equal(code, 0, out.slice(-2000));
    for (const e of ends) {
      if (timeoutSecs === 30) assert.equal(e.end, 'done', `a stream shorter than the shutdown timeout finished: ${e.text.slice(-300)}`);
      // A cut stream ended at an event boundary or mid-event, but it ended: the read resolved.
    }
    if (timeoutSecs === 1) assert.ok(ends.some((e) => e.end === 'cut'), 'streams past the deadline were cut');
    for (const status of statuses.keys()) assert.ok(status === 200 || status === 503, `only 200 (before the drain) or 503 (during): ${[...statuses]}`);
  });
}
