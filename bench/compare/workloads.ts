// The workloads of bench/compare, each a `portico bench` run, and the figure it yields.

export interface Workload {
  key: string;
  /** What the table calls it. */
  title: string;
  args: string[];
}

export const WORKLOADS: Workload[] = [
  { key: 'unary', title: '1-token unary chat, 32 in flight', args: ['--concurrency', '32', '--requests', '2000', '--warmup', '64', '--input-tokens', '32', '--output-tokens', '1'] },
  { key: 'stream', title: '64-token stream, 32 in flight', args: ['--concurrency', '32', '--requests', '400', '--warmup', '32', '--input-tokens', '32', '--output-tokens', '64', '--stream'] },
  { key: 'ttft1', title: 'TTFT, 1 request in flight (64-token stream)', args: ['--concurrency', '1', '--requests', '200', '--warmup', '10', '--input-tokens', '32', '--output-tokens', '64', '--stream'] },
  { key: 'streams256', title: '256 concurrent 64-token streams', args: ['--concurrency', '256', '--requests', '768', '--warmup', '0', '--input-tokens', '32', '--output-tokens', '64', '--stream'] },
  { key: 'long', title: 'long prompt, 8k in / 64 out, 8 in flight', args: ['--concurrency', '8', '--requests', '80', '--warmup', '8', '--input-tokens', '8192', '--output-tokens', '64', '--stream'] },
];
