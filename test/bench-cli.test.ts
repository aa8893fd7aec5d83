// `portico bench` end to end against a real `portico serve` (mock engines over real gRPC,
// the real Qwen3 tokenizer): the command-line contract (flags, files written, fields present,
// progress only on a terminal), the TTFT rule with a reasoning parser, sweeps, dataset files,
// and failures (exit codes, errors by kind, clear usage errors).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPortico, runPortico, QWEN3, BIN, type Proc } from './helpers/portico.js';
import { resolveOptions, UsageError } from '../src/cli/options.js';
import { BENCH_OPTIONS } from '../src/cli/bench-options.js';
import { benchConfig } from '../src/cli/bench.js';

let server: Proc;
const dir = mkdtempSync(join(tmpdir(), 'portico-bench-test-'));

before(async () => {
  server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'sim', '--mock-workers', '2']);
});
after(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Stats { count: number; mean: number; p50: number; p90: number; p95: number; p99: number; max: number }
interface Summary {
  requests: number; ok: number; failed: number; errors: Record<string, number>; durationS: number; requestsPerS: number; outputTokensPerS: number;
  promptTokens: number; outputTokens: number; ttftMs: Stats | null; ttfoMs: Stats | null; tpotMs: Stats | null; itlPerRequestMs: Stats | null; itlPerGapMs: Stats | null; e2eMs: Stats;
  goodput?: { good: number; fraction: number; requestsPerS: number }; definitions: Record<string, string>;
  cells: (Summary & { cell: Record<string, number> | null })[];
}
interface Row { cell: Record<string, number> | null; ok: boolean; ttftMs: number | null; ttfoMs: number | null; tpotMs: number | null; e2eMs: number; promptTokens: number; outputTokens: number; startMs: number }

const rows = (out: string): Row[] => readFileSync(join(out, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Row);
const summary = (out: string): Summary => JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Summary;

test('the CLI contract: a streamed closed-loop run writes summary.json, requests.jsonl, report.html and report.png, quietly when not on a terminal', async () => {
  const out = join(dir, 'contract');
  const r = await runPortico(['bench', '--url', server.url, '--model', 'm', '--tokenizer', QWEN3, '--concurrency', '4', '--requests', '16', '--input-tokens', '100', '--output-tokens', '8', '--stream', '--shared-prefix', '40', '--endpoint', 'chat', '--warmup', '2', '--slo', 'ttft:60000,tpot:60000', '--output', out]);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.equal(r.stderr, '', 'no progress line when stderr is not a TTY');
  assert.match(r.stdout, /TTFT/);
  assert.match(r.stdout, /ITL per gap/);
  const s = summary(out);
  assert.equal(s.requests, 16, 'warm-up requests are not counted');
  assert.equal(s.failed, 0);
  assert.equal(s.outputTokens, 16 * 8);
  // Exact input lengths: the same prompt tokens for every request (system + user + template).
  const rs = rows(out);
  assert.equal(rs.length, 16);
  assert.equal(new Set(rs.map((x) => x.promptTokens)).size, 1);
  assert.ok(rs[0].promptTokens >= 100 && rs[0].promptTokens < 100 + 16, `prompt tokens ${rs[0].promptTokens}`);
  for (const x of rs) {
    assert.ok(x.ok && x.ttftMs! > 0 && x.tpotMs! > 0 && x.e2eMs >= x.ttftMs!, JSON.stringify(x));
    assert.equal(x.outputTokens, 8);
  }
  for (const k of ['ttftMs', 'ttfoMs', 'tpotMs', 'itlPerRequestMs', 'itlPerGapMs', 'e2eMs'] as const) {
    const st = s[k]!;
    assert.ok(st && st.p50 > 0 && st.p50 <= st.p90 && st.p90 <= st.p95 && st.p95 <= st.p99 && st.p99 <= st.max, `${k}: ${JSON.stringify(st)}`);
  }
  assert.equal(s.ttftMs!.count, 16);
  // One gap per chunk after the first; a chunk holds one token or more (held-back partial characters).
  assert.equal(s.itlPerGapMs!.count, rs.reduce((a, x) => a + (x as Row & { chunks: number }).chunks - 1, 0));
  assert.ok(s.itlPerGapMs!.count <= 16 * 7 && s.itlPerGapMs!.count >= 16 * 4, `${s.itlPerGapMs!.count} gaps`);
  assert.ok(s.requestsPerS > 0 && s.outputTokensPerS > 0);
  assert.deepEqual(s.goodput && [s.goodput.good, s.goodput.fraction], [16, 1]);
  assert.match(s.definitions.itlPerGapMs, /gap/);
  assert.equal(s.cells.length, 1);
  const html = readFileSync(join(out, 'report.html'), 'utf8');
  assert.match(html, /^<!doctype html>/);
  assert.match(html, /<svg[^>]*>[\s\S]*Latency CDFs/);
  assert.match(html, /TTFT over the run/);
  assert.doesNotMatch(html, /<script|src="http/, 'self-contained');
  const png = readFileSync(join(out, 'report.png'));
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(png.length > 5000);
});

test('on a terminal a progress line shows requests done, the rate and p50 TTFT', async () => {
  const args = ['bench', '--url', server.url, '--model', 'm', '--tokenizer', QWEN3, '--concurrency', '2', '--requests', '6', '--input-tokens', '16', '--output-tokens', '4', '--stream'];
  const cmd = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  const child = spawn('script', ['-qec', cmd, '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PORTICO_SHARDS: '1' } });
  let tty = '';
  child.stdout.on('data', (d: Buffer) => (tty += d.toString()));
  child.stderr.on('data', (d: Buffer) => (tty += d.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  assert.equal(code, 0, tty);
  assert.match(tty, /\rbench|\r\x1b\[2Kbench/);
  assert.match(tty, /bench: 6\/6 done .* req\/s {2}p50 TTFT \d+\.\d ms {2}0 errors/);
});

test('TTFT counts the first reasoning delta; TTFO waits for the answer (--reasoning-parser qwen3)', async (t) => {
  const engine = await startPortico(['mock-engine', '--port', '0', '--model-path', QWEN3, '--mode', 'sim', '--reasoning-tokens', '4', '--step-ms', '50', '--eos-probability', '0']);
  t.after(() => engine.stop());
  const s = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', engine.url, '--reasoning-parser', 'qwen3']);
  t.after(() => s.stop());
  const out = join(dir, 'reasoning');
  const r = await runPortico(['bench', '--url', s.url, '--tokenizer', QWEN3, '--concurrency', '2', '--requests', '4', '--input-tokens', '32', '--output-tokens', '8', '--stream', '--output', out]);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  for (const x of rows(out)) {
    // <think>, 4 reasoning tokens, </think>: the first reasoning delta leaves the engine about
    // five 50 ms steps before the first answer token.
    assert.ok(x.ttftMs !== null && x.ttfoMs !== null && x.ttfoMs > x.ttftMs, `TTFT ${x.ttftMs} ms, TTFO ${x.ttfoMs} ms`);
    assert.equal(x.outputTokens, 8);
  }
  const sm = summary(out);
  assert.ok(sm.ttfoMs!.p50 - sm.ttftMs!.p50 >= 100, `TTFT p50 ${sm.ttftMs!.p50} ms, TTFO p50 ${sm.ttfoMs!.p50} ms`);
});

test('a concurrency sweep writes one result per cell; an open-loop rate sweep with a cap and a duration is bounded', async () => {
  const out = join(dir, 'sweep');
  const r = await runPortico(['bench', '--url', server.url, '--tokenizer', QWEN3, '--sweep', 'concurrency:1,3', '--requests', '6', '--input-tokens', '24', '--output-tokens', '4', '--stream', '--output', out, '--json']);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  const s = JSON.parse(r.stdout) as Summary & { sweep: { param: string; values: number[] } };
  assert.deepEqual(s.sweep, { param: 'concurrency', values: [1, 3] });
  assert.deepEqual(s.cells.map((c) => [c.cell, c.requests, c.failed]), [[{ concurrency: 1 }, 6, 0], [{ concurrency: 3 }, 6, 0]]);
  assert.deepEqual(summary(out).cells.map((c) => c.cell), [{ concurrency: 1 }, { concurrency: 3 }]);
  const rs = rows(out);
  assert.equal(rs.filter((x) => x.cell?.concurrency === 1).length, 6);
  assert.equal(rs.filter((x) => x.cell?.concurrency === 3).length, 6);
  const html = readFileSync(join(out, 'report.html'), 'utf8');
  assert.match(html, /Throughput vs concurrency/);
  assert.match(html, /sweep of concurrency \(closed loop\): 1, 3/);

  const open = await runPortico(['bench', '--url', server.url, '--tokenizer', QWEN3, '--sweep', 'rate:20,40', '--max-concurrency', '2', '--duration', '0.5', '--input-tokens', '16', '--output-tokens', '2', '--endpoint', 'completions', '--json']);
  assert.equal(open.code, 0, open.stderr + open.stdout);
  const o = JSON.parse(open.stdout) as Summary;
  assert.equal(o.cells.length, 2);
  for (const c of o.cells) {
    assert.ok(c.requests >= 1 && c.requests <= 40, `${c.requests} requests in a 0.5 s cell`);
    assert.equal(c.ttftMs, null, 'not streamed: no TTFT');
    assert.ok(c.e2eMs.count === c.requests);
  }
});

test('a dataset file of ShareGPT and OpenAI-request lines is sent as written; a bad line is a clear error', async () => {
  const file = join(dir, 'data.jsonl');
  writeFileSync(
    file,
    [
      JSON.stringify({ conversations: [{ from: 'system', value: 'You are terse.' }, { from: 'human', value: 'Name a river.' }, { from: 'gpt', value: 'The Nile is a long river in Africa.' }, { from: 'human', value: 'Another?' }, { from: 'gpt', value: 'Amazon.' }] }),
      '',
      // Sent as written: its own ignore_eos keeps the sim engine's random EOS out of the count.
      JSON.stringify({ messages: [{ role: 'user', content: 'Count to three.' }], max_tokens: 3, ignore_eos: true }),
    ].join('\n'),
  );
  const out = join(dir, 'dataset');
  const r = await runPortico(['bench', '--url', server.url, '--tokenizer', QWEN3, '--dataset', file, '--concurrency', '1', '--requests', '3', '--stream', '--output', out]);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  const rs = rows(out);
  assert.equal(rs.length, 3);
  // Session 0 has two turns (max_tokens = the reply's length in tokens); then the OpenAI line (3).
  const count = async (text: string) => ((await (await fetch(`${server.url}/tokenize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', prompt: text, add_special_tokens: false }) })).json()) as { count: number }).count;
  assert.deepEqual(rs.map((x) => x.outputTokens), [await count('The Nile is a long river in Africa.'), await count('Amazon.'), 3]);
  assert.ok(rs[1].promptTokens > rs[0].promptTokens, 'the second turn carries the first exchange');

  const bad = join(dir, 'bad.jsonl');
  writeFileSync(bad, `${JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] })}\n{"text": "no"}\n`);
  const b = await runPortico(['bench', '--url', server.url, '--dataset', bad, '--requests', '1']);
  assert.equal(b.code, 1);
  assert.match(b.stderr, /bad\.jsonl:2: neither ShareGPT \("conversations"\) nor an OpenAI request/);
});

test('failed requests: exit 1, errors by kind, the first error shown; the server still serves', async () => {
  const out = join(dir, 'failing');
  const r = await runPortico(['bench', '--url', server.url, '--model', 'wrong', '--tokenizer', QWEN3, '--requests', '3', '--concurrency', '1', '--input-tokens', '8', '--output-tokens', '2', '--output', out]);
  assert.equal(r.code, 1);
  assert.match(r.stdout, /3 failed: http_404 3/);
  assert.match(r.stdout, /first error  404 /);
  assert.deepEqual(summary(out).errors, { http_404: 3 });
  const ok = await fetch(`${server.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', prompt: 'hi', max_tokens: 2 }) });
  assert.equal(ok.status, 200);

  const down = await runPortico(['bench', '--url', 'http://127.0.0.1:1', '--model', 'm', '--tokenizer', QWEN3, '--requests', '2', '--concurrency', '1', '--input-tokens', '8', '--json']);
  assert.equal(down.code, 1);
  assert.deepEqual((JSON.parse(down.stdout) as Summary).errors, { connect: 2 });
});

test('usage errors are clear: exit 2 from the command, and each rule of the option checks', async () => {
  const both = await runPortico(['bench', '--url', server.url, '--model', 'm', '--tokenizer', QWEN3, '--concurrency', '2', '--rate', '3']);
  assert.equal(both.code, 2, both.stderr);
  assert.match(both.stderr, /--concurrency \(closed loop\) or --rate \(open loop\), not both/);
  const noTok = await runPortico(['bench', '--url', server.url, '--model', 'm']);
  assert.equal(noTok.code, 2);
  assert.match(noTok.stderr, /--tokenizer DIR is required/);

  const cases: [string[], RegExp][] = [
    [['--max-concurrency', '2'], /--max-concurrency caps an open loop/],
    [['--stream', '--no-stream'], /contradict/],
    [['--slo', 'ttft=3'], /--slo: 'ttft=3' is not NAME:MS/],
    [['--slo', 'ttft:0'], /--slo: ttft must be > 0 ms/],
    [['--sweep', 'threads:1,2'], /--sweep: 'threads:1,2' is not concurrency/],
    [['--sweep', 'concurrency:1,0'], /integers >= 1/],
    [['--sweep', 'rate:1', '--concurrency', '2'], /drop --concurrency/],
    [['--input-tokens', '5', '--isl', '6'], /disagree/],
    [['--requests', '0'], /--requests must be an integer >= 1/],
    [['--dataset', 'x.jsonl', '--turns', '2'], /a --dataset brings its own/],
  ];
  for (const [args, re] of cases) {
    await assert.rejects(async () => {
      const { values } = resolveOptions(BENCH_OPTIONS, ['--url', server.url, '--model', 'm', '--tokenizer', QWEN3, ...args], {});
      await benchConfig(values, false);
    }, (err: Error) => err instanceof UsageError && re.test(err.message), args.join(' '));
  }
  const { values } = resolveOptions(BENCH_OPTIONS, ['--url', `${server.url}/`, '--tokenizer', QWEN3, '--isl', '7', '--osl', '3', '--rate', '5', '--max-concurrency', '4', '--duration', '2'], {});
  const c = await benchConfig(values, false);
  assert.equal(c.target.model, 'm', "the server's first model");
  assert.equal(c.target.url, server.url);
  assert.equal(c.target.stream, false);
  assert.deepEqual([c.workload.inputTokens, c.workload.outputTokens], [7, 3]);
  assert.deepEqual(c.load, { kind: 'open', rate: 5, maxConcurrency: 4 });
  assert.deepEqual(c.limits, { requests: null, durationS: 2, warmup: 0 });
});
