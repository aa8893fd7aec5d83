// The pure parts of `portico bench`: SSE splitting across arbitrary byte boundaries, the
// measures (TPOT, per-gap ITL, goodput, errors by kind), --slo / --sweep parsing and dataset lines.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseSplitter } from '../src/bench/sse.js';
import { measure } from '../src/bench/measures.js';
import { parseSlo, parseSweep, ConfigError } from '../src/bench/config.js';
import { parseDatasetLine, DatasetError } from '../src/bench/dataset.js';
import type { RequestRecord } from '../src/bench/loop.js';

test('SSE events split the same whatever the read boundaries (LF and CRLF, multi-line data, comments)', () => {
  const body = 'data: {"a":1}\n\n: keep-alive\n\ndata: {"b":\ndata: 2}\r\n\r\nevent: x\ndata:[DONE]\n\n';
  const whole = new SseSplitter().push(body);
  assert.deepEqual(whole, ['{"a":1}', '{"b":\n2}', '[DONE]']);
  for (let cut = 1; cut < body.length; cut++) {
    const s = new SseSplitter();
    assert.deepEqual([...s.push(body.slice(0, cut)), ...s.push(body.slice(cut)), ...s.rest()], whole, `cut at ${cut}`);
  }
  const tail = new SseSplitter();
  assert.deepEqual(tail.push('data: {"x":1}'), []);
  assert.deepEqual(tail.rest(), ['{"x":1}'], 'a last event without its blank line still counts');
});

function rec(o: Partial<RequestRecord>): RequestRecord {
  return { ok: true, status: 200, e2eMs: 100, ttftMs: 10, ttfoMs: 10, gapsMs: [], promptTokens: 5, outputTokens: 10, reasoningTokens: null, cachedTokens: 0, text: '', reasoning: '', index: 0, session: 0, turn: 0, startMs: 0, ...o };
}

test('measures: TPOT per request, ITL per gap, throughput over the duration, goodput against every SLO bound, errors by kind', () => {
  const records = [
    rec({ e2eMs: 100, ttftMs: 10, outputTokens: 10, gapsMs: [10, 10, 10, 10, 10, 10, 10, 10, 10] }), // tpot 10
    rec({ e2eMs: 210, ttftMs: 20, outputTokens: 20, gapsMs: [5, 15] }), // tpot 10
    rec({ e2eMs: 500, ttftMs: 300, outputTokens: 5, gapsMs: [50] }), // tpot 50, misses ttft:100
    rec({ e2eMs: 30, ttftMs: 30, outputTokens: 1 }), // no tpot
    rec({ ok: false, status: 503, errorKind: 'http', error: '503 busy', ttftMs: null }),
    rec({ ok: false, status: null, errorKind: 'timeout', error: 'slow', ttftMs: null }),
    rec({ ok: false, status: 503, errorKind: 'http', error: '503 again', ttftMs: null }),
  ];
  const { measures: m } = measure(records, 2, { ttftMs: 100, tpotMs: 20 });
  assert.equal(m.requests, 7);
  assert.equal(m.ok, 4);
  assert.deepEqual(m.errors, { http_503: 2, timeout: 1 });
  assert.equal(m.firstError, '503 busy');
  assert.equal(m.outputTokens, 36);
  assert.equal(m.outputTokensPerS, 18);
  assert.equal(m.requestsPerS, 2);
  assert.equal(m.tpotMs!.count, 3);
  assert.equal(m.tpotMs!.mean, Math.round(((10 + 10 + 50) / 3) * 1000) / 1000);
  assert.deepEqual(m.itlPerRequestMs, m.tpotMs);
  assert.equal(m.itlPerGapMs!.count, 12);
  assert.equal(m.itlPerGapMs!.max, 50);
  assert.equal(m.ttftMs!.count, 4);
  assert.equal(m.ttftMs!.max, 300);
  assert.ok(m.ttftMs!.p99 <= m.ttftMs!.max);
  assert.deepEqual(m.goodput, { slo: { ttftMs: 100, tpotMs: 20 }, good: 3, fraction: 0.4286, requestsPerS: 1.5 });
  assert.equal(measure([], 1, undefined).measures.e2eMs, null);
});

test('--slo and --sweep parse their forms and reject others', () => {
  assert.deepEqual(parseSlo('ttft:200, tpot:50,e2e:1500.5'), { ttftMs: 200, tpotMs: 50, e2eMs: 1500.5 });
  assert.throws(() => parseSlo('itl:5'), ConfigError);
  assert.throws(() => parseSlo(''), /at least one/);
  assert.deepEqual(parseSweep('concurrency:1,2,8'), { param: 'concurrency', values: [1, 2, 8] });
  assert.deepEqual(parseSweep('rate:0.5,4'), { param: 'rate', values: [0.5, 4] });
  assert.throws(() => parseSweep('concurrency:1.5'), /integers >= 1/);
  assert.throws(() => parseSweep('rate:0'), /numbers > 0/);
});

test('dataset lines: ShareGPT turns become a session; OpenAI requests pass as written with max_tokens filled in', () => {
  const tok = { count: (t: string) => t.split(' ').length };
  const s = parseDatasetLine(JSON.stringify({ conversations: [{ from: 'system', value: 'sys' }, { from: 'human', value: 'q1' }, { from: 'gpt', value: 'a b c' }, { from: 'human', value: 'q2' }] }), 'f:1', 7, tok);
  assert.deepEqual(s.turns, [
    { kind: 'synthetic', system: 'sys', user: 'q1', maxTokens: 3 },
    { kind: 'synthetic', system: undefined, user: 'q2', maxTokens: 7 },
  ]);
  const r = parseDatasetLine(JSON.stringify({ messages: [{ role: 'user', content: 'x' }], temperature: 0 }), 'f:2', 9, undefined);
  assert.deepEqual(r.turns, [{ kind: 'raw', body: { messages: [{ role: 'user', content: 'x' }], temperature: 0, max_tokens: 9 } }]);
  const keep = parseDatasetLine(JSON.stringify({ prompt: 'x', max_completion_tokens: 2 }), 'f:3', 9, undefined);
  assert.deepEqual(keep.turns, [{ kind: 'raw', body: { prompt: 'x', max_completion_tokens: 2 } }]);
  assert.throws(() => parseDatasetLine('{', 'f:4', 1, undefined), (e: Error) => e instanceof DatasetError && /^f:4: not JSON/.test(e.message));
  assert.throws(() => parseDatasetLine('[]', 'f:5', 1, undefined), /f:5: not a JSON object/);
  assert.throws(() => parseDatasetLine(JSON.stringify({ conversations: [{ from: 'gpt', value: 'a' }] }), 'f:6', 1, undefined), /no human turn/);
  assert.throws(() => parseDatasetLine(JSON.stringify({ conversations: [{ from: 'robot', value: 'a' }] }), 'f:7', 1, undefined), /from 'robot'/);
});
