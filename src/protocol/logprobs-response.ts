// Logprobs in OpenAI's two response shapes, as vLLM writes them:
//  chat         choices[].logprobs = {content: [{token, logprob, bytes, top_logprobs: [...]}]}
//  completions  choices[].logprobs = {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}
// A token is its own decoded text, or "token_id:<id>" with return_tokens_as_token_ids.
// -inf is written as -9999 (JSON has no infinities).

import type { TokenLogprob } from '../pipeline/logprobs.js';

export interface TokenNamer {
  /** The text of one token id. */
  (id: number): string;
}

/** Names tokens by decoding them one by one, or as "token_id:<id>". */
export function tokenNamer(decode: (id: number) => string, asTokenIds: boolean): TokenNamer {
  if (asTokenIds) return (id) => `token_id:${id}`;
  const cache = new Map<number, string>();
  return (id) => {
    let s = cache.get(id);
    if (s === undefined) {
      s = decode(id);
      cache.set(id, s);
    }
    return s;
  };
}

const clamp = (v: number) => (Number.isFinite(v) ? v : v > 0 ? 0 : -9999);
const bytesOf = (s: string) => Array.from(Buffer.from(s, 'utf8'));

export interface ChatLogprobEntry {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }>;
}

/** Chat: one content entry per token, with `topK` alternatives each. */
export function chatLogprobContent(list: readonly TokenLogprob[], name: TokenNamer, topK: number): ChatLogprobEntry[] {
  return list.map((t) => {
    const token = name(t.id);
    return {
      token,
      logprob: clamp(t.logprob),
      bytes: bytesOf(token),
      top_logprobs: t.top.slice(0, topK).map((a) => {
        const s = name(a.id);
        return { token: s, logprob: clamp(a.logprob), bytes: bytesOf(s) };
      }),
    };
  });
}

/** Chat streaming: the `logprobs` value of one delta (JSON text). */
export function chatDeltaLogprobs(list: readonly TokenLogprob[], name: TokenNamer, topK: number): string {
  return JSON.stringify({ content: chatLogprobContent(list, name, topK) });
}

export interface CompletionLogprobs {
  tokens: string[];
  token_logprobs: number[];
  top_logprobs: Array<Record<string, number>>;
  text_offset: number[];
}

/**
 * Completions: parallel arrays. `offset` is where the first token starts in the choice's
 * text (after an echoed prompt); it is advanced past the tokens written, in code points.
 */
export function completionLogprobs(list: readonly TokenLogprob[], name: TokenNamer, topK: number, offset: { at: number }): CompletionLogprobs {
  const out: CompletionLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  for (const t of list) {
    const token = name(t.id);
    out.tokens.push(token);
    out.token_logprobs.push(clamp(t.logprob));
    const top: Record<string, number> = {};
    for (const a of t.top.slice(0, topK)) top[name(a.id)] ??= clamp(a.logprob);
    // vLLM's dict holds the sampled token too.
    top[token] ??= clamp(t.logprob);
    out.top_logprobs.push(top);
    out.text_offset.push(offset.at);
    offset.at += [...token].length;
  }
  return out;
}

/** Join completion logprobs of successive deltas (unary responses). */
export function appendCompletionLogprobs(into: CompletionLogprobs, more: CompletionLogprobs): void {
  into.tokens.push(...more.tokens);
  into.token_logprobs.push(...more.token_logprobs);
  into.top_logprobs.push(...more.top_logprobs);
  into.text_offset.push(...more.text_offset);
}
