// Logprobs in OpenAI's two response shapes, as vLLM writes them:
//  chat         choices[].logprobs = {content: [{token, logprob, bytes, top_logprobs: [...]}]}
//  completions  choices[].logprobs = {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}
// A token is its own decoded text, or "token_id:<id>" with return_tokens_as_token_ids.
// -inf is written as -9999 (JSON has no infinities).

import type { TokenLogprob } from './token-logprob.js';

/** One token as the responses write it, computed once per token id. */
interface TokenText {
  text: string;
  /** JSON string literal of `text`. */
  json: string;
  bytes: number[];
  /** JSON array of `bytes`. */
  bytesJson: string;
}

function tokenText(text: string): TokenText {
  const bytes = Array.from(Buffer.from(text, 'utf8'));
  return { text, json: JSON.stringify(text), bytes, bytesJson: `[${bytes.join(',')}]` };
}

/** Texts kept per model (token texts never change); bounded so a huge vocabulary cannot grow it without end. */
const MODEL_CACHE_LIMIT = 1 << 16;
const modelCaches = new WeakMap<object, Map<number, TokenText>>();

/** Names tokens by decoding them one by one, or as "token_id:<id>". */
export class TokenNamer {
  private readonly cache: Map<number, TokenText>;

  constructor(
    private readonly decode: (id: number) => string,
    private readonly asTokenIds: boolean,
    cache: Map<number, TokenText>,
  ) {
    this.cache = cache;
  }

  get(id: number): TokenText {
    let t = this.cache.get(id);
    if (t === undefined) {
      t = tokenText(this.asTokenIds ? `token_id:${id}` : this.decode(id));
      if (this.cache.size < MODEL_CACHE_LIMIT) this.cache.set(id, t);
    }
    return t;
  }

  text(id: number): string {
    return this.get(id).text;
  }
}

/**
 * A namer for one request. With `owner` (the served model) decoded texts are shared by every
 * request of that model; "token_id:<id>" names are cached per request.
 */
export function tokenNamer(decode: (id: number) => string, asTokenIds: boolean, owner?: object): TokenNamer {
  if (asTokenIds || !owner) return new TokenNamer(decode, asTokenIds, new Map());
  let cache = modelCaches.get(owner);
  if (!cache) modelCaches.set(owner, (cache = new Map()));
  return new TokenNamer(decode, false, cache);
}

const clamp = (v: number) => (Number.isFinite(v) ? v : v > 0 ? 0 : -9999);

export interface ChatLogprobEntry {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }>;
}

/** Chat: one content entry per token, with `topK` alternatives each. */
export function chatLogprobContent(list: readonly TokenLogprob[], name: TokenNamer, topK: number): ChatLogprobEntry[] {
  return list.map((t) => {
    const tok = name.get(t.id);
    return {
      token: tok.text,
      logprob: clamp(t.logprob),
      bytes: tok.bytes,
      top_logprobs: t.top.slice(0, topK).map((a) => {
        const alt = name.get(a.id);
        return { token: alt.text, logprob: clamp(a.logprob), bytes: alt.bytes };
      }),
    };
  });
}

/** Chat streaming: the `logprobs` value of one delta (JSON text), written without an object tree. */
export function chatDeltaLogprobs(list: readonly TokenLogprob[], name: TokenNamer, topK: number): string {
  let out = '{"content":[';
  for (let i = 0; i < list.length; i++) {
    const t = list[i];
    const tok = name.get(t.id);
    if (i > 0) out += ',';
    out += `{"token":${tok.json},"logprob":${clamp(t.logprob)},"bytes":${tok.bytesJson},"top_logprobs":[`;
    const k = Math.min(topK, t.top.length);
    for (let j = 0; j < k; j++) {
      const a = t.top[j];
      const alt = name.get(a.id);
      if (j > 0) out += ',';
      out += `{"token":${alt.json},"logprob":${clamp(a.logprob)},"bytes":${alt.bytesJson}}`;
    }
    out += ']}';
  }
  return out + ']}';
}

export interface CompletionLogprobs {
  tokens: string[];
  /** null for the first prompt token (echo with logprobs). */
  token_logprobs: Array<number | null>;
  top_logprobs: Array<Record<string, number> | null>;
  text_offset: number[];
}

/**
 * Completions: parallel arrays. `offset` is where the first token starts in the choice's
 * text (after an echoed prompt); it is advanced past the tokens written, in code points.
 */
export function completionLogprobs(list: readonly TokenLogprob[], name: TokenNamer, topK: number, offset: { at: number }): CompletionLogprobs {
  const out: CompletionLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  for (const t of list) {
    const token = name.text(t.id);
    out.tokens.push(token);
    out.text_offset.push(offset.at);
    offset.at += [...token].length;
    if (Number.isNaN(t.logprob)) {
      // The first prompt token: nothing precedes it.
      out.token_logprobs.push(null);
      out.top_logprobs.push(null);
      continue;
    }
    out.token_logprobs.push(clamp(t.logprob));
    const top: Record<string, number> = {};
    for (const a of t.top.slice(0, topK)) top[name.text(a.id)] ??= clamp(a.logprob);
    // vLLM's dict holds the sampled token too.
    top[token] ??= clamp(t.logprob);
    out.top_logprobs.push(top);
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
