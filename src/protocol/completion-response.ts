// OpenAI text completion bodies (object "text_completion"), streaming and not.

import { usageJson, type Usage } from './chat-response.js';
import { jsonString } from './json-text.js';
import type { CompletionLogprobs } from './logprobs-response.js';

export interface CompletionChoice {
  index: number;
  text: string;
  finishReason: string;
  logprobs?: CompletionLogprobs;
}

/** `nvext`: the response extensions asked for with nvext.extra_fields, or null. */
export function completion(id: string, model: string, created: number, choices: CompletionChoice[], usage: Usage, nvext: Record<string, unknown> | null = null): string {
  return JSON.stringify({
    id,
    object: 'text_completion',
    created,
    model,
    choices: choices.map((c) => ({ index: c.index, text: c.text, logprobs: c.logprobs ?? null, finish_reason: c.finishReason })),
    usage,
    ...(nvext ? { nvext } : {}),
  });
}

/** What follows a plain text delta's JSON string (no logprobs, no usage). */
const TEXT_TAIL = ',"logprobs":null,"finish_reason":null}]}\n\n';

export class CompletionChunkWriter {
  private readonly head: string;
  /** Per choice index: the text of a text chunk before its JSON string. */
  private readonly textHeads: string[] = [];

  constructor(id: string, model: string, created: number) {
    this.head = `data: {"id":${jsonString(id)},"object":"text_completion","created":${created},"model":${jsonString(model)},"choices":[`;
  }

  /** `logprobs`: JSON text of the delta's logprobs object (see logprobs-response.ts). */
  text(index: number, text: string, usage: Usage | null, logprobs = 'null'): string {
    // The per-token case in three pieces (see ChatChunkWriter.content).
    if (usage === null && logprobs === 'null') return (this.textHeads[index] ??= `${this.head}{"index":${index},"text":`) + jsonString(text) + TEXT_TAIL;
    const u = usage ? `,"usage":${usageJson(usage)}` : '';
    return `${this.head}{"index":${index},"text":${jsonString(text)},"logprobs":${logprobs},"finish_reason":null}]${u}}\n\n`;
  }

  finish(index: number, reason: string, usage: Usage | null, logprobs = 'null'): string {
    const u = usage ? `,"usage":${usageJson(usage)}` : '';
    return `${this.head}{"index":${index},"text":"","logprobs":${logprobs},"finish_reason":${jsonString(reason)}}]${u}}\n\n`;
  }

  /** A chunk with no choices carrying the response `nvext` (asked for with nvext.extra_fields). */
  nvext(nvext: Record<string, unknown>): string {
    return `${this.head}],"nvext":${JSON.stringify(nvext)}}\n\n`;
  }

  usage(usage: Usage): string {
    return `${this.head}],"usage":${usageJson(usage)}}\n\n`;
  }
}
