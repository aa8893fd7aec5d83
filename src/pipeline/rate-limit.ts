// A request's rate-limit ticket: the budget (slot) its API key draws on, resolved by the
// face that read the request, and where its rate-limit headers go. runGeneration admits
// each of the request's generations with it (one request, the prompt's tokens, a place
// among the key's concurrent requests), charges the output tokens as the engine streams
// them, settles the count with the engine's own at each choice's end, and gives the
// place back when the generation is over. A refusal is a 429 (RESOURCE_EXHAUSTED on
// gRPC) whose headers say when to come back.

import { ApiError } from '../protocol/errors.js';
import { writeRateLimitHeaders, type HeaderTarget, type RateLimitStyle } from '../protocol/rate-limit-headers.js';
import { newAdmission, type Admission, type BudgetTable } from '../limits/budget-table.js';
import type { RateLimits } from '../limits/key-limits.js';
import type { EngineEvent } from '../engine/types.js';

/** The decision being made: admission is synchronous, so one scratch object serves every request. */
const SCRATCH: Admission = newAdmission();

export class LimitTicket {
  constructor(
    readonly budgets: BudgetTable,
    readonly slot: number,
    private readonly style: RateLimitStyle,
    private readonly headers: HeaderTarget | null,
  ) {}

  /** Take what one generation of `promptTokens` needs, or throw the 429 (its headers written first). */
  admit(promptTokens: number): void {
    const a = this.budgets.admit(this.slot, promptTokens, SCRATCH);
    if (this.headers) writeRateLimitHeaders(this.style, a, this.headers, Date.now());
    if (a.refused !== null) throw refusal(a, promptTokens);
  }

  charge(tokens: number): void {
    this.budgets.charge(this.slot, tokens);
  }

  release(): void {
    this.budgets.release(this.slot);
  }
}

/**
 * One generation's output tokens, charged to its ticket as the engine streams them: each
 * message's new tokens as it arrives; at a choice's end, the engine's own count of what it
 * generated settles the rest (tokens no chunk carried: a non-streamed answer, the part of a
 * stream before a migration).
 */
export class TokenCharge {
  /** Per choice, the output tokens charged so far. */
  private readonly charged: number[] = [];

  constructor(private readonly ticket: LimitTicket) {}

  event(ev: EngineEvent): void {
    const charged = this.charged;
    if (ev.kind === 'chunk') {
      const c = ev.chunk;
      charged[c.index] = (charged[c.index] ?? 0) + c.tokenIds.length;
      this.ticket.charge(c.tokenIds.length);
      return;
    }
    const d = ev.done;
    const more = d.completionTokens - (charged[d.index] ?? 0);
    if (more > 0) {
      charged[d.index] = d.completionTokens;
      this.ticket.charge(more);
    }
  }
}

/** The ticket of a request that sent `key` ('' for none), or null when its key is not limited. */
export function ticketFor(limits: RateLimits | undefined, key: string, style: RateLimitStyle, headers: HeaderTarget | null): LimitTicket | null {
  if (limits === undefined || !limits.active) return null;
  const slot = limits.slotFor(key);
  return slot < 0 ? null : new LimitTicket(limits.budgets, slot, style, headers);
}

/** The API key of a request's Authorization (Bearer) or x-api-key header ('' for none). */
export function requestKey(header: (name: string) => string): string {
  const auth = header('authorization');
  return auth.length > 7 && auth.slice(0, 7).toLowerCase() === 'bearer ' ? auth.slice(7).trim() : header('x-api-key');
}

function refusal(a: Admission, promptTokens: number): ApiError {
  const retryAfter = a.retryAfterMs > 0 ? Math.ceil(a.retryAfterMs / 1000) : 1;
  switch (a.refused) {
    case 'too_large':
      // No wait makes it fit: say so (x-should-retry is read by the OpenAI and Anthropic SDKs).
      return new ApiError(429, `Request too large: its prompt is ${promptTokens} tokens and this key's limit is ${a.tokens.limit} tokens per window; shorten the prompt.`, { type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null });
    case 'concurrent':
      return new ApiError(429, 'Rate limit reached: this key has as many requests in flight as it may; retry when one ends.', { type: 'rate_limit_error', code: 'rate_limit_exceeded', retryAfter });
    case 'requests':
      return new ApiError(429, `Rate limit reached for requests: limit ${a.requests.limit} per window, 0 left. Please try again in ${(a.retryAfterMs / 1000).toFixed(3)}s.`, { type: 'rate_limit_error', code: 'rate_limit_exceeded', retryAfter });
    default:
      return new ApiError(429, `Rate limit reached for tokens: limit ${a.tokens.limit} per window, ${a.tokens.remaining} left, ${promptTokens} needed for the prompt. Please try again in ${(a.retryAfterMs / 1000).toFixed(3)}s.`, { type: 'rate_limit_error', code: 'rate_limit_exceeded', retryAfter });
  }
}
