// The figures bench/compare and bench/real-engine take from `portico bench --json` (its
// summary.json), checked, so a changed or failed run is an error rather than a silent NaN in
// the table; and the run of `portico bench` that yields them.

import { spawn } from 'node:child_process';
import { once } from 'node:events';

export interface BenchFigures {
  requests: number;
  failed: number;
  requestsPerS: number;
  outputTokens: number;
  promptTokens: number;
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
    promptTokens: num(s.promptTokens, 'promptTokens'),
    ttftP50: ttft ? num(ttft.p50, 'ttftMs.p50') : null,
    ttftP99: ttft ? num(ttft.p99, 'ttftMs.p99') : null,
    e2eP50: num(e2e.p50, 'e2eMs.p50'),
    e2eP99: num(e2e.p99, 'e2eMs.p99'),
    ...(typeof s.firstError === 'string' ? { firstError: s.firstError } : {}),
  };
}

/** `portico bench --url URL --tokenizer DIR --json ARGS` (bin/portico.js under `root`), in a child process (on `cpus`, taskset's list, when given); its figures. */
export async function runPorticoBench(root: string, url: string, tokenizerDir: string, args: string[], cpus?: string): Promise<BenchFigures> {
  const cmd = [process.execPath, `${root}bin/portico.js`, 'bench', '--url', url, '--tokenizer', tokenizerDir, '--json', ...args];
  const child = cpus ? spawn('taskset', ['-c', cpus, ...cmd], { stdio: ['ignore', 'pipe', 'inherit'] }) : spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  if (code !== 0 && !out) throw new Error(`portico bench ${args.join(' ')} exited with ${code}`);
  return parseBenchSummary(out);
}
