// The deployment shape's traffic as `portico bench` arguments, shared by deploy-shape.ts and
// jit-settle.ts so that both warm a frontend the same way and offer it the same requests.

/** Output tokens of a streamed request. */
export const STREAM_TOKENS = 64;

const ONE_TOKEN = ['--warmup', '0', '--input-tokens', '32', '--output-tokens', '1'];

/** Closed-loop 1-token chats, 16 in flight: the JIT and caches hot. */
export const CLOSED_LOOP_WARM_UP = ['--concurrency', '16', '--requests', '4000', ...ONE_TOKEN];

/** Closed-loop streams, 8 in flight: the streaming path hot too. */
export const STREAM_WARM_UP = ['--concurrency', '8', '--requests', '200', '--warmup', '0', '--input-tokens', '32', '--output-tokens', String(STREAM_TOKENS), '--stream'];

/** Open-loop Poisson arrivals of 1-token chats at `rate` per second for `seconds`. */
export function unaryAt(rate: number, seconds: number): string[] {
  return ['--rate', String(rate), '--duration', String(seconds), ...ONE_TOKEN, '--max-concurrency', '256'];
}

/** Open-loop Poisson arrivals of streams at `rate` per second for `seconds`. */
export function streamsAt(rate: number, seconds: number): string[] {
  return ['--rate', String(rate), '--duration', String(seconds), '--warmup', '0', '--input-tokens', '32', '--output-tokens', String(STREAM_TOKENS), '--stream', '--max-concurrency', '256'];
}
