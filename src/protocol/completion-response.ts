// OpenAI text completion bodies (object "text_completion"), streaming and not.

import type { Usage } from './chat-response.js';

export interface CompletionChoice {
  index: number;
  text: string;
  finishReason: string;
}

export function completion(id: string, model: string, created: number, choices: CompletionChoice[], usage: Usage): string {
  return JSON.stringify({
    id,
    object: 'text_completion',
    created,
    model,
    choices: choices.map((c) => ({ index: c.index, text: c.text, logprobs: null, finish_reason: c.finishReason })),
    usage,
  });
}

export class CompletionChunkWriter {
  private readonly head: string;

  constructor(id: string, model: string, created: number) {
    this.head = `data: {"id":${JSON.stringify(id)},"object":"text_completion","created":${created},"model":${JSON.stringify(model)},"choices":[`;
  }

  text(index: number, text: string, usage: Usage | null): string {
    const u = usage ? `,"usage":${JSON.stringify(usage)}` : '';
    return `${this.head}{"index":${index},"text":${JSON.stringify(text)},"logprobs":null,"finish_reason":null}]${u}}\n\n`;
  }

  finish(index: number, reason: string, usage: Usage | null): string {
    const u = usage ? `,"usage":${JSON.stringify(usage)}` : '';
    return `${this.head}{"index":${index},"text":"","logprobs":null,"finish_reason":${JSON.stringify(reason)}}]${u}}\n\n`;
  }

  usage(usage: Usage): string {
    return `${this.head}],"usage":${JSON.stringify(usage)}}\n\n`;
  }
}
