// The figures of one measured phase, from its request records. Definitions (the summary
// carries them, so a reader never guesses which ITL is meant):
//  - ttft: first chunk with content, reasoning or a tool-call delta (aiperf's rule);
//  - ttfo: first chunk with non-reasoning output (content or tool call);
//  - tpot = itlPerRequest: (e2e − ttft) / (output tokens − 1) per request (vLLM's TPOT; the
//    ITL of aiperf and guidellm), requests of one output token have none;
//  - itlPerGap: every gap between two output chunks of a stream (vLLM's ITL);
//  - throughput: counted requests (and their output tokens) over the phase's duration;
//  - goodput: requests that met every --slo bound, per second.

import type { Slo } from './config.js';
import { LatencyHistogram, type Stats } from './histogram.js';
import type { RequestRecord } from './loop.js';

export const DEFINITIONS = {
  ttftMs: 'time to the first chunk carrying content, reasoning or a tool-call delta',
  ttfoMs: 'time to the first chunk carrying non-reasoning output (content or a tool call)',
  tpotMs: '(e2e - ttft) / (output_tokens - 1), per request (vLLM TPOT)',
  itlPerRequestMs: '(e2e - ttft) / (output_tokens - 1), per request (aiperf and guidellm ITL; equals tpot)',
  itlPerGapMs: 'each gap between two consecutive output chunks of a stream (vLLM ITL)',
  e2eMs: 'from sending the request to the end of its answer',
  outputTokens: "the server's usage.completion_tokens (reasoning included); counted with --tokenizer when the server sends no usage",
};

export interface Goodput {
  slo: Slo;
  good: number;
  fraction: number;
  requestsPerS: number;
}

export interface Measures {
  requests: number;
  ok: number;
  failed: number;
  /** Failed requests by kind: `http_<status>`, connect, timeout, stream, protocol. */
  errors: Record<string, number>;
  firstError?: string;
  durationS: number;
  requestsPerS: number;
  outputTokensPerS: number;
  promptTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  ttftMs: Stats | null;
  ttfoMs: Stats | null;
  tpotMs: Stats | null;
  itlPerRequestMs: Stats | null;
  itlPerGapMs: Stats | null;
  e2eMs: Stats | null;
  goodput?: Goodput;
  /** The load generator's own CPU (this process, user + system) in the phase, and per request. */
  client: { cpuS: number; cpuUsPerRequest: number };
}

export interface Histograms {
  ttft: LatencyHistogram;
  tpot: LatencyHistogram;
  itlGap: LatencyHistogram;
  e2e: LatencyHistogram;
}

/** Per-request TPOT, or null (not streamed, or one output token). */
export function tpotOf(r: RequestRecord): number | null {
  if (r.ttftMs === null || r.outputTokens === null || r.outputTokens < 2) return null;
  return (r.e2eMs - r.ttftMs) / (r.outputTokens - 1);
}

function meets(r: RequestRecord, slo: Slo): boolean {
  if (!r.ok) return false;
  const tpot = tpotOf(r);
  // Unstreamed: the first token arrives with the whole answer.
  if (slo.ttftMs !== undefined && (r.ttftMs ?? r.e2eMs) > slo.ttftMs) return false;
  if (slo.tpotMs !== undefined && tpot !== null && tpot > slo.tpotMs) return false;
  if (slo.e2eMs !== undefined && r.e2eMs > slo.e2eMs) return false;
  return true;
}

export function measure(records: readonly RequestRecord[], durationS: number, slo: Slo | undefined, clientCpuS = 0): { measures: Measures; histograms: Histograms } {
  const h = { ttft: new LatencyHistogram(), ttfo: new LatencyHistogram(), tpot: new LatencyHistogram(), itlGap: new LatencyHistogram(), e2e: new LatencyHistogram() };
  const errors: Record<string, number> = {};
  let ok = 0;
  let promptTokens = 0;
  let outputTokens = 0;
  let reasoningTokens = 0;
  let cachedTokens = 0;
  let good = 0;
  let firstError: string | undefined;
  for (const r of records) {
    if (!r.ok) {
      const kind = r.errorKind === 'http' ? `http_${r.status}` : (r.errorKind ?? 'unknown');
      errors[kind] = (errors[kind] ?? 0) + 1;
      firstError ??= r.error;
      continue;
    }
    ok++;
    promptTokens += r.promptTokens ?? 0;
    outputTokens += r.outputTokens ?? 0;
    reasoningTokens += r.reasoningTokens ?? 0;
    cachedTokens += r.cachedTokens ?? 0;
    h.e2e.record(r.e2eMs);
    if (r.ttftMs !== null) h.ttft.record(r.ttftMs);
    if (r.ttfoMs !== null) h.ttfo.record(r.ttfoMs);
    const tpot = tpotOf(r);
    if (tpot !== null) h.tpot.record(tpot);
    for (const g of r.gapsMs) h.itlGap.record(g);
    if (slo && meets(r, slo)) good++;
  }
  const d = durationS > 0 ? durationS : Number.EPSILON;
  const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;
  const tpot = h.tpot.stats();
  const measures: Measures = {
    requests: records.length,
    ok,
    failed: records.length - ok,
    errors,
    ...(firstError !== undefined ? { firstError } : {}),
    durationS: round(durationS, 3),
    requestsPerS: round(ok / d, 3),
    outputTokensPerS: round(outputTokens / d, 1),
    promptTokens,
    outputTokens,
    reasoningTokens,
    cachedTokens,
    ttftMs: h.ttft.stats(),
    ttfoMs: h.ttfo.stats(),
    tpotMs: tpot,
    itlPerRequestMs: tpot,
    itlPerGapMs: h.itlGap.stats(),
    e2eMs: h.e2e.stats(),
    ...(slo ? { goodput: { slo, good, fraction: round(records.length ? good / records.length : 0, 4), requestsPerS: round(good / d, 3) } } : {}),
    client: { cpuS: round(clientCpuS, 3), cpuUsPerRequest: round(records.length ? (clientCpuS * 1e6) / records.length : 0, 1) },
  };
  return { measures, histograms: h };
}
