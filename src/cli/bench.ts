// `portico bench` on the command line: checks the options into a BenchConfig, runs it
// (src/bench/), prints the figures. Exit code 1 when any counted request failed.

import { UsageError, type OptionValue } from './options.js';
import { ConfigError, parseSlo, parseSweep, type BenchConfig, type Load } from '../bench/config.js';
import type { Stats } from '../bench/histogram.js';
import type { Measures } from '../bench/measures.js';
import { firstModel, runBench } from '../bench/run.js';
import { summaryJson, type BenchResult } from '../bench/result.js';

function alias(v: Record<string, OptionValue>, name: string, short: string, dflt: number): number {
  const a = v[name] as number | undefined;
  const b = v[short] as number | undefined;
  if (a !== undefined && b !== undefined && a !== b) throw new UsageError(`--${name} ${a} and its alias --${short} ${b} disagree; give one`);
  return a ?? b ?? dflt;
}

export async function benchConfig(v: Record<string, OptionValue>, isTty: boolean): Promise<BenchConfig> {
  const concurrency = v.concurrency as number | undefined;
  const rate = v.rate as number | undefined;
  const maxConcurrency = v['max-concurrency'] as number | undefined;
  if (concurrency !== undefined && rate !== undefined) throw new UsageError('give --concurrency (closed loop) or --rate (open loop), not both; an open loop takes --max-concurrency as its cap');
  if (maxConcurrency !== undefined && rate === undefined && !String(v.sweep ?? '').startsWith('rate:')) throw new UsageError('--max-concurrency caps an open loop: use it with --rate (or --sweep rate:...)');
  if (v.stream && v['no-stream']) throw new UsageError('--stream and --no-stream contradict each other');
  let sweep;
  let slo = {};
  try {
    sweep = v.sweep !== undefined ? parseSweep(v.sweep as string) : undefined;
    slo = v.slo !== undefined ? parseSlo(v.slo as string) : {};
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  if (sweep?.param === 'concurrency' && rate !== undefined) throw new UsageError('--sweep concurrency:... runs closed loops; drop --rate');
  if (sweep?.param === 'rate' && concurrency !== undefined) throw new UsageError('--sweep rate:... runs open loops; drop --concurrency (cap them with --max-concurrency)');
  const dataset = v.dataset as string | undefined;
  const tokenizer = v.tokenizer as string | undefined;
  if (!dataset && !tokenizer) throw new UsageError('--tokenizer DIR is required to make synthetic prompts of exact token lengths (or give --dataset FILE)');
  if (dataset && ((v['shared-prefix'] as number) > 0 || (v.turns as number) > 1)) throw new UsageError('--shared-prefix and --turns shape synthetic prompts; a --dataset brings its own');
  const durationS = (v.duration as number | undefined) ?? null;
  const requests = (v.requests as number | undefined) ?? (durationS === null ? 500 : null);
  const load: Load = rate !== undefined ? { kind: 'open', rate, maxConcurrency: maxConcurrency ?? Number.MAX_SAFE_INTEGER } : { kind: 'closed', concurrency: concurrency ?? 32 };
  const url = (v.url as string).replace(/\/+$/, '');
  const apiKey = v['api-key'] as string | undefined;
  const model = (v.model as string | undefined) ?? (await firstModel(url, apiKey));
  return {
    target: { url, model, endpoint: v.endpoint as 'chat' | 'completions', apiKey, stream: Boolean(v.stream), timeoutMs: (v.timeout as number) * 1000 },
    load: sweep?.param === 'rate' && load.kind === 'closed' ? { kind: 'open', rate: sweep.values[0], maxConcurrency: maxConcurrency ?? Number.MAX_SAFE_INTEGER } : load,
    limits: { requests, durationS, warmup: v.warmup as number },
    workload: {
      tokenizer,
      dataset,
      inputTokens: alias(v, 'input-tokens', 'isl', 256),
      outputTokens: alias(v, 'output-tokens', 'osl', 64),
      sharedPrefix: v['shared-prefix'] as number,
      prefixes: v.prefixes as number,
      turns: v.turns as number,
      seed: v.seed as number,
    },
    slo,
    sweep,
    output: v.output as string | undefined,
    progress: isTty,
  };
}

function row(name: string, s: Stats | null): string {
  if (!s) return '';
  const f = (x: number) => x.toFixed(2).padStart(9);
  return `${name.padEnd(22)}${f(s.mean)}${f(s.p50)}${f(s.p90)}${f(s.p95)}${f(s.p99)}${f(s.max)}\n`;
}

export function formatMeasures(m: Measures): string {
  const errors = Object.entries(m.errors).map(([k, n]) => `${k} ${n}`).join(', ');
  const hit = m.promptTokens > 0 ? ((100 * m.cachedTokens) / m.promptTokens).toFixed(1) : '0.0';
  return (
    `requests     ${m.requests} (${m.failed} failed${errors ? `: ${errors}` : ''}) in ${m.durationS} s\n` +
    `throughput   ${m.requestsPerS} req/s, ${m.outputTokensPerS} output tokens/s\n` +
    `tokens       ${m.promptTokens} prompt (${m.cachedTokens} cached, ${hit}%), ${m.outputTokens} output (${m.reasoningTokens} reasoning)\n` +
    (m.goodput ? `goodput      ${m.goodput.requestsPerS} req/s (${(100 * m.goodput.fraction).toFixed(1)}% met ${Object.entries(m.goodput.slo).map(([k, x]) => `${k.replace(/Ms$/, '')} ≤ ${x} ms`).join(', ')})\n` : '') +
    `${'ms'.padEnd(22)}${['mean', 'p50', 'p90', 'p95', 'p99', 'max'].map((h) => h.padStart(9)).join('')}\n` +
    row('TTFT', m.ttftMs) +
    row('TTFO (non-reasoning)', m.ttfoMs) +
    row('TPOT = ITL/request', m.tpotMs) +
    row('ITL per gap', m.itlPerGapMs) +
    row('end to end', m.e2eMs) +
    `client CPU   ${m.client.cpuS} s (${m.client.cpuUsPerRequest} µs per request)\n` +
    (m.firstError ? `first error  ${m.firstError}\n` : '')
  );
}

export function formatResult(res: BenchResult): string {
  return res.cells.map((c) => (c.cell ? `== ${Object.entries(c.cell).map(([k, v]) => `${k} ${v}`).join(', ')}\n` : '') + formatMeasures(c.measures)).join('\n') + (res.config.output ? `wrote ${res.config.output}/{summary.json,requests.jsonl,report.html,report.png}\n` : '');
}

export async function benchMain(v: Record<string, OptionValue>): Promise<number> {
  const config = await benchConfig(v, Boolean(process.stderr.isTTY));
  const res = await runBench(config);
  process.stdout.write(v.json ? `${JSON.stringify(summaryJson(res))}\n` : formatResult(res));
  return res.cells.some((c) => c.measures.failed > 0) ? 1 : 0;
}
