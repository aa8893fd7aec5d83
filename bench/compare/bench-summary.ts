// The figures bench/compare takes from `portico bench --json` (its summary.json), checked,
// so a changed or failed run is an error rather than a silent NaN in the table.

export interface BenchFigures {
  requests: number;
  failed: number;
  requestsPerS: number;
  outputTokens: number;
  ttftP50: number | null;
  ttftP99: number | null;
  e2eP50: number;
  e2eP99: number;
  firstError?: string;
}

export function parseBenchSummary(text: string): BenchFigures {
  const s = JSON.parse(text) as Record<string, unknown>;
  const num = (v: unknown, what: string) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`portico bench summary: ${what} is not a number (${JSON.stringify(v)})`);
    return v;
  };
  const stats = (v: unknown) => v as { p50: number; p99: number } | null;
  const e2e = stats(s.e2eMs);
  if (!e2e) throw new Error(`portico bench summary: no request succeeded${typeof s.firstError === 'string' ? ` (first error: ${s.firstError})` : ''}`);
  const ttft = stats(s.ttftMs);
  return {
    requests: num(s.requests, 'requests'),
    failed: num(s.failed, 'failed'),
    requestsPerS: num(s.requestsPerS, 'requestsPerS'),
    outputTokens: num(s.outputTokens, 'outputTokens'),
    ttftP50: ttft ? num(ttft.p50, 'ttftMs.p50') : null,
    ttftP99: ttft ? num(ttft.p99, 'ttftMs.p99') : null,
    e2eP50: num(e2e.p50, 'e2eMs.p50'),
    e2eP99: num(e2e.p99, 'e2eMs.p99'),
    ...(typeof s.firstError === 'string' ? { firstError: s.firstError } : {}),
  };
}
