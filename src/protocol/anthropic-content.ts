// The content blocks of an Anthropic message, built from parsed output in the order it
// arrives: `thinking` (reasoning), `text`, `tool_use`. A change of kind closes the open
// block and opens the next one. When streaming, each step also returns its SSE text:
//   content_block_start (ping after the first), content_block_delta (text_delta,
//   thinking_delta, input_json_delta), for thinking a signature_delta before
//   content_block_stop. One builder serves both the JSON body and the stream, so both
//   always carry the same blocks.
//
// Signatures: Anthropic clients expect every thinking block to carry a `signature`, and
// send it back with the block in later turns. Portico has no secret to sign with; its
// signature is `portico-sha256:` + the hex SHA-256 of the thinking text, deterministic
// and verifiable by anyone. It marks the block's origin; it is not a security guarantee.

import { createHash } from 'node:crypto';

export type AnthropicBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** The signature Portico gives a thinking block (see the file header). */
export function thinkingSignature(thinking: string): string {
  return `portico-sha256:${createHash('sha256').update(thinking).digest('hex')}`;
}

type Open =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string }
  | { type: 'tool_use'; id: string; name: string; json: string };

function sse(name: string, data: object): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A content_block_delta (per token: written without building an object). */
function delta(index: number, type: string, field: string, text: string): string {
  return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"${type}","${field}":${JSON.stringify(text)}}}\n\n`;
}

/** Tool arguments as the `input` object; text that is not a JSON object is kept under `_raw`. */
function inputOf(json: string): Record<string, unknown> {
  if (json.trim() === '') return {};
  try {
    const v = JSON.parse(json) as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through
  }
  return { _raw: json };
}

export class AnthropicContent {
  private readonly blocks: AnthropicBlock[] = [];
  private open: Open | null = null;

  /** `stream`: return the SSE text of each step (otherwise every step returns ''). */
  constructor(private readonly stream: boolean) {}

  /** Tool calls made so far. */
  get toolUses(): number {
    return this.blocks.filter((b) => b.type === 'tool_use').length + (this.open?.type === 'tool_use' ? 1 : 0);
  }

  text(text: string): string {
    let out = this.open?.type === 'text' ? '' : this.begin({ type: 'text', text: '' });
    (this.open as { text: string }).text += text;
    if (this.stream) out += delta(this.blocks.length, 'text_delta', 'text', text);
    return out;
  }

  thinking(text: string): string {
    let out = this.open?.type === 'thinking' ? '' : this.begin({ type: 'thinking', thinking: '' });
    (this.open as { thinking: string }).thinking += text;
    if (this.stream) out += delta(this.blocks.length, 'thinking_delta', 'thinking', text);
    return out;
  }

  toolStart(id: string, name: string): string {
    return this.begin({ type: 'tool_use', id, name, json: '' });
  }

  toolArgs(text: string): string {
    if (this.open?.type !== 'tool_use') return '';
    this.open.json += text;
    return this.stream ? delta(this.blocks.length, 'input_json_delta', 'partial_json', text) : '';
  }

  /** Closes the open block; a message with no content gets one empty text block. */
  finish(): string {
    if (this.open === null && this.blocks.length === 0) return this.begin({ type: 'text', text: '' }) + this.close();
    return this.close();
  }

  /** The finished blocks (after finish()). */
  get content(): AnthropicBlock[] {
    return this.blocks;
  }

  private begin(block: Open): string {
    const out = this.close();
    const first = this.blocks.length === 0;
    this.open = block;
    if (!this.stream) return out;
    const index = this.blocks.length;
    const start =
      block.type === 'text'
        ? { type: 'text', text: '' }
        : block.type === 'thinking'
          ? { type: 'thinking', thinking: '', signature: '' }
          : { type: 'tool_use', id: block.id, name: block.name, input: {} };
    return out + sse('content_block_start', { type: 'content_block_start', index, content_block: start }) + (first ? sse('ping', { type: 'ping' }) : '');
  }

  private close(): string {
    const b = this.open;
    if (b === null) return '';
    this.open = null;
    const index = this.blocks.length;
    let out = '';
    if (b.type === 'text') this.blocks.push({ type: 'text', text: b.text });
    else if (b.type === 'thinking') {
      const signature = thinkingSignature(b.thinking);
      this.blocks.push({ type: 'thinking', thinking: b.thinking, signature });
      if (this.stream) out += sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature } });
    } else this.blocks.push({ type: 'tool_use', id: b.id, name: b.name, input: inputOf(b.json) });
    if (this.stream) out += sse('content_block_stop', { type: 'content_block_stop', index });
    return out;
  }
}
