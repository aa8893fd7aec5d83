// The mock engine's deterministic mode (MockEngineOptions.deterministic): the token at each
// position is a pure function of the token ids before it (prompt and generated so far), with
// nothing seeded per request, per choice or per worker. A request cut anywhere and continued
// elsewhere as prompt + generated ids therefore produces exactly what the uninterrupted run
// would, which is what request migration must preserve (test/migration*.e2e.test.ts).
//
// With the model's tokenizer, the output is a script that exercises the reasoning and
// tool-call parsers of Qwen-style models:
//
//   <think>\n{words}\n</think>\n\n{words}[\n<tool_call>\n{"name": T, "arguments": {...}}\n</tool_call>]EOS
//
// The script is chosen by the request's context: the ids up to and including the last
// `<|im_start|>` (the chat template's assistant turn; the script never writes one), or the
// first id when there is none. Its words, lengths and whether it ends with a tool call come
// from a hash of that context; the tool is one the rendered prompt declares (the
// `"function": {"name": ...}` entries of its <tools> block), so Portico's parser keeps the
// call. Where the history stands in the script is read from its tail: the longest suffix
// that is a prefix of the script (it starts at the script's first token). The token after
// a whole script, or after a tail that matches none of it, is the script's first again.
//
// Without a tokenizer the tokens are a hash of the tail of the history and its length,
// EOS with the engine's EOS probability.

import { hashString, mulberry32 } from './seeded.js';

/** What the script needs of the model's tokenizer. */
export interface ScriptTokenizer {
  encode(text: string): ArrayLike<number>;
  decode(ids: ArrayLike<number>): string;
  tokenToId(token: string): number | null;
}

export interface DeterministicOptions {
  eosTokenIds: readonly number[];
  /** Hash-mode tokens are drawn below this id. */
  drawBound: number;
  /** Hash mode: chance per position of EOS. */
  eosProbability: number;
  tokenizer?: ScriptTokenizer;
}

const WORDS = [
  'amber', 'basin', 'cedar', 'delta', 'ember', 'fjord', 'grove', 'harbor', 'island', 'juniper',
  'kettle', 'lantern', 'meadow', 'nimbus', 'orchid', 'pebble', 'quartz', 'river', 'summit', 'thistle',
  'umber', 'valley', 'willow', 'xenon', 'yarrow', 'zephyr', 'north', 'south', 'quiet', 'bright',
];

/** Scripts kept per context hash (a bound, not a tuning: a miss rebuilds the same script). */
const CACHE_LIMIT = 1024;

/** The history one choice has: its prompt followed by what it generated. */
export interface History {
  prompt: ArrayLike<number>;
  output: readonly number[];
}

export class DeterministicTokens {
  private readonly anchor: number | null;
  private readonly scripts = new Map<number, readonly number[]>();
  private readonly eos: number;

  constructor(private readonly o: DeterministicOptions) {
    this.anchor = o.tokenizer?.tokenToId('<|im_start|>') ?? null;
    this.eos = o.eosTokenIds[0] ?? 0;
  }

  /** The token after `h`: a pure function of its ids. */
  next(h: History): number {
    return this.o.tokenizer ? this.scripted(h) : this.hashed(h);
  }

  /**
   * What stands in for the next token where the engine may not emit it (EOS or a stop id
   * before min_tokens, EOS under ignore_eos): a pure function of `h` too, never `avoid`.
   */
  filler(h: History, avoid: (id: number) => boolean): number {
    const base = hashTail(h, 8) % this.o.drawBound;
    for (let k = 0; k < this.o.drawBound; k++) {
      const t = (base + k) % this.o.drawBound;
      if (!avoid(t) && !this.o.eosTokenIds.includes(t)) return t;
    }
    return 0;
  }

  private hashed(h: History): number {
    const x = hashTail(h, 8);
    if (this.o.eosTokenIds.length > 0 && mulberry32(x ^ 0x2545f491)() < this.o.eosProbability) return this.eos;
    let t = x % this.o.drawBound;
    while (this.o.eosTokenIds.includes(t)) t = (t + 1) % this.o.drawBound;
    return t;
  }

  private scripted(h: History): number {
    const len = h.prompt.length + h.output.length;
    const at = (i: number): number => (i < h.prompt.length ? h.prompt[i]! : h.output[i - h.prompt.length]!);
    // The context: up to the last anchor, else the first id.
    let end = 1;
    if (this.anchor !== null) {
      for (let i = len - 1; i >= 0; i--) {
        if (at(i) === this.anchor) {
          end = i + 1;
          break;
        }
      }
    }
    let key = 0x811c9dc5;
    for (let i = 0; i < end; i++) key = Math.imul(key ^ at(i), 0x01000193);
    key >>>= 0;
    const script = this.script(key, end, at);
    // The longest tail of the history (after the context) that is a prefix of the script.
    const first = script[0]!;
    for (let i = Math.max(end, len - script.length + 1); i < len; i++) {
      if (at(i) !== first) continue;
      let k = 1;
      while (i + k < len && at(i + k) === script[k]) k++;
      if (i + k === len) return script[k]!;
    }
    return first;
  }

  private script(key: number, end: number, at: (i: number) => number): readonly number[] {
    const known = this.scripts.get(key);
    if (known) return known;
    const context = new Uint32Array(end);
    for (let i = 0; i < end; i++) context[i] = at(i);
    const made = this.build(key, toolNames(this.o.tokenizer!.decode(context)));
    if (this.scripts.size >= CACHE_LIMIT) this.scripts.clear();
    this.scripts.set(key, made);
    return made;
  }

  private build(seed: number, tools: string[]): number[] {
    const rand = mulberry32(seed);
    const words = (min: number, span: number) => Array.from({ length: min + Math.floor(rand() * span) }, () => WORDS[Math.floor(rand() * WORDS.length)]!).join(' ');
    const think = words(4, 10);
    const answer = words(3, 14);
    let text = `<think>\n${think}\n</think>\n\n${answer[0]!.toUpperCase()}${answer.slice(1)}.`;
    if (tools.length > 0 && rand() < 0.6) {
      const name = tools[Math.floor(rand() * tools.length)]!;
      const args = JSON.stringify({ query: words(1, 3), limit: 1 + Math.floor(rand() * 9) });
      text += `\n<tool_call>\n{"name": ${JSON.stringify(name)}, "arguments": ${args}}\n</tool_call>`;
    }
    return [...Array.from(this.o.tokenizer!.encode(text)), this.eos];
  }
}

/** The function names a rendered prompt declares (`"function": {"name": "..."` entries). */
export function toolNames(prompt: string): string[] {
  const out: string[] = [];
  for (const m of prompt.matchAll(/"function":\s*\{\s*"name":\s*"([^"\\]+)"/g)) if (!out.includes(m[1]!)) out.push(m[1]!);
  return out;
}

/** FNV-1a of the last `n` ids of `h` and its length. */
function hashTail(h: History, n: number): number {
  const len = h.prompt.length + h.output.length;
  let x = hashString(`len:${len}`);
  for (let i = Math.max(0, len - n); i < len; i++) {
    const id = i < h.prompt.length ? h.prompt[i]! : h.output[i - h.prompt.length]!;
    x = Math.imul(x ^ id, 0x01000193);
  }
  return x >>> 0;
}
