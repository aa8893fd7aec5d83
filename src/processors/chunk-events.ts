// Reads a processor's OpenAI chat completion chunks as per-choice output events (text,
// reasoning, tool call start / arguments, finish) and the usage they report: what the
// non-streaming chat answer and the Responses and Anthropic converters are built from.

import { randomHexId } from '../protocol/random-ids.js';
import { ApiError } from '../protocol/errors.js';
import type { ChatCompletionChunk } from './contract.js';

export type ChunkEvent =
  | { kind: 'text'; index: number; text: string }
  | { kind: 'reasoning'; index: number; text: string }
  | { kind: 'tool_start'; index: number; call: number; id: string; name: string }
  | { kind: 'tool_args'; index: number; call: number; text: string }
  | { kind: 'finish'; index: number; reason: string };

export interface ChunkUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

function malformed(why: string): ApiError {
  return new ApiError(500, 'Internal Server Error', { type: 'internal_error', detail: `the chat processor yielded a malformed chunk: ${why}` });
}

/** A chunk that is not an object with a `choices` array. */
export function malformedChunk(c: unknown): ApiError {
  return malformed(c === null ? 'null' : Array.isArray(c) ? 'an array' : typeof c !== 'object' ? `a ${typeof c}` : '`choices` is not an array');
}

export class ChunkReader {
  /** The last usage a chunk reported, if any. */
  usage: ChunkUsage | null = null;
  /** The first chunk's id / created / model, if it had them. */
  id: string | null = null;
  created: number | null = null;
  private readonly calls = new Set<string>();

  events(chunk: ChatCompletionChunk): ChunkEvent[] {
    if (!chunk || typeof chunk !== 'object' || Array.isArray(chunk)) throw malformedChunk(chunk);
    if (this.id === null && typeof chunk.id === 'string') this.id = chunk.id;
    if (this.created === null && typeof chunk.created === 'number') this.created = chunk.created;
    const u = chunk.usage;
    if (u && typeof u === 'object') {
      this.usage = { promptTokens: num(u.prompt_tokens), completionTokens: num(u.completion_tokens), cachedTokens: num(u.prompt_tokens_details?.cached_tokens) };
    }
    const choices = chunk.choices ?? [];
    if (!Array.isArray(choices)) throw malformed('`choices` is not an array');
    const out: ChunkEvent[] = [];
    for (const c of choices) {
      if (!c || typeof c !== 'object') throw malformed('a choice is not an object');
      const index = Number.isInteger(c.index) ? c.index : 0;
      const d = c.delta ?? {};
      if (typeof d.reasoning_content === 'string' && d.reasoning_content !== '') out.push({ kind: 'reasoning', index, text: d.reasoning_content });
      if (typeof d.content === 'string' && d.content !== '') out.push({ kind: 'text', index, text: d.content });
      if (Array.isArray(d.tool_calls)) {
        for (const t of d.tool_calls) {
          const call = Number.isInteger(t?.index) ? t.index : 0;
          const key = `${index}:${call}`;
          if (!this.calls.has(key)) {
            this.calls.add(key);
            out.push({ kind: 'tool_start', index, call, id: typeof t.id === 'string' && t.id ? t.id : `call_${randomHexId()}`, name: t.function?.name ?? '' });
          }
          const args = t?.function?.arguments;
          if (typeof args === 'string' && args !== '') out.push({ kind: 'tool_args', index, call, text: args });
        }
      }
      if (typeof c.finish_reason === 'string') out.push({ kind: 'finish', index, reason: c.finish_reason });
    }
    return out;
  }
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}
