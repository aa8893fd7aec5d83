// The workloads of bench/compare, each a `portico bench` run, and the figure it yields.

export interface Workload {
  key: string;
  /** What the table calls it. */
  title: string;
  args: string[];
  /** Runs against the frontend started with its tool-call parser, on the tools dataset (bench/compare/tools-body.ts), whose path run.ts adds. */
  tools?: boolean;
  /** A rate search (bench/compare/rate-search.ts): `args` are each probe's, rateArgs(R) adds the rate and the request count. */
  search?: boolean;
}

export const WORKLOADS: Workload[] = [
  { key: 'unary', title: '1-token unary chat, 32 in flight', args: ['--concurrency', '32', '--requests', '2000', '--warmup', '64', '--input-tokens', '32', '--output-tokens', '1'] },
  { key: 'stream', title: '64-token stream, 32 in flight', args: ['--concurrency', '32', '--requests', '400', '--warmup', '32', '--input-tokens', '32', '--output-tokens', '64', '--stream'] },
  { key: 'ttft1', title: 'TTFT, 1 request in flight (64-token stream)', args: ['--concurrency', '1', '--requests', '200', '--warmup', '10', '--input-tokens', '32', '--output-tokens', '64', '--stream'] },
  { key: 'streams256', title: '256 concurrent 64-token streams', args: ['--concurrency', '256', '--requests', '768', '--warmup', '0', '--input-tokens', '32', '--output-tokens', '64', '--stream'] },
  { key: 'long', title: 'long prompt, 8k in / 64 out, 8 in flight', args: ['--concurrency', '8', '--requests', '80', '--warmup', '8', '--input-tokens', '8192', '--output-tokens', '64', '--stream'] },
  { key: 'rate', title: 'rate search: highest Poisson rate of 1-token unary chats with e2e p99 < 10 ms (each probe max(150 requests, 3 s) of arrivals, ≤ 8 probes, ≤ 256 in flight, delivered ≥ 0.8 × offered)', args: ['--warmup', '20', '--max-concurrency', '256', '--input-tokens', '32', '--output-tokens', '1'], search: true },
  { key: 'tools', title: 'tool-calling chat, 2 hermes-style tools, 64-token streams, 16 in flight, frontend started with its tool-call parser', args: ['--concurrency', '16', '--requests', '320', '--warmup', '16', '--output-tokens', '64', '--stream'], tools: true },
];

/** One probe of a rate search at `rate` req/s: ~3 s of arrivals (at least 150 requests, so longer at low rates). */
export function rateArgs(w: Workload, rate: number): string[] {
  return [...w.args, '--rate', String(rate), '--requests', String(Math.max(150, Math.round(rate * 3)))];
}
