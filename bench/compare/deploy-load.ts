// The deployment shape's traffic as `portico bench` arguments, shared by deploy-shape.ts and
// jit-settle.ts so that both warm a frontend the same way and offer it the same requests.

/** Output tokens of a streamed request. */
export const STREAM_TOKENS = 64;

const ONE_TOKEN = ['--input-tokens', '32', '--output-tokens', '1'];
const STREAMS = ['--input-tokens', '32', '--output-tokens', String(STREAM_TOKENS), '--stream'];

/**
 * Seconds of each open-loop cell that the client sends at the cell's own rate before it
 * measures, in the same process and on the same connections: requests sent about a second
 * into a freshly started `portico bench` come back in a cluster of slow ones, and in an 8-s
 * cell that cluster alone sets the p99 (see bench/RESULTS.md, "Tail latency in the
 * deployment shape"). The frontend's CPU is read over the lead-in and the measured requests
 * together, so the cell's CPU per request divides by both (leadInRequests).
 */
export const CLIENT_LEAD_IN_S = 3;

/** Requests (or streams) a cell at `rate` sends before it measures. */
export function leadInRequests(rate: number, leadInS: number): number {
  return Math.round(rate * leadInS);
}

/** Closed-loop 1-token chats, 16 in flight: the JIT and caches hot. */
export const CLOSED_LOOP_WARM_UP = ['--concurrency', '16', '--requests', '4000', '--warmup', '0', ...ONE_TOKEN];

/** Closed-loop streams, 8 in flight: the streaming path hot too. */
export const STREAM_WARM_UP = ['--concurrency', '8', '--requests', '200', '--warmup', '0', ...STREAMS];

/** Open-loop Poisson arrivals of `requests` at `rate` per second for `seconds`, after `leadInS` s of the same unmeasured. */
function openLoop(rate: number, seconds: number, leadInS: number, requests: string[]): string[] {
  return ['--rate', String(rate), '--duration', String(seconds), '--warmup', String(leadInRequests(rate, leadInS)), ...requests, '--max-concurrency', '256'];
}

/** Open-loop 1-token chats (see openLoop). */
export function unaryAt(rate: number, seconds: number, leadInS = 0): string[] {
  return openLoop(rate, seconds, leadInS, ONE_TOKEN);
}

/** Open-loop streams (see openLoop). */
export function streamsAt(rate: number, seconds: number, leadInS = 0): string[] {
  return openLoop(rate, seconds, leadInS, STREAMS);
}
