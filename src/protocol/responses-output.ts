// The output items of a Responses answer, built from parsed output in the order it
// arrives: `reasoning` (reasoning text, as vLLM: content [{type:"reasoning_text"}],
// summary []), `message` (output_text), `function_call` {id, call_id, name, arguments,
// status}. A change of kind closes the open item and opens the next. When streaming,
// each step also returns its events (OpenAI Responses streaming):
//   reasoning:     output_item.added, content_part.added (reasoning_text),
//                  reasoning_text.delta..., reasoning_text.done, content_part.done, output_item.done
//   message:       output_item.added, content_part.added (output_text),
//                  output_text.delta..., output_text.done, content_part.done, output_item.done
//   function_call: output_item.added, function_call_arguments.delta...,
//                  function_call_arguments.done, output_item.done
// One builder serves both the JSON body and the stream, so both carry the same items.

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface TextPart {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs: unknown[];
}

export type OutputItem =
  | { id: string; type: 'reasoning'; summary: unknown[]; content: { type: 'reasoning_text'; text: string }[]; encrypted_content: null; status: ItemStatus }
  | { id: string; type: 'message'; status: ItemStatus; role: 'assistant'; content: TextPart[] }
  | { id: string; type: 'function_call'; call_id: string; name: string; arguments: string; status: ItemStatus };

/** Writes numbered stream events (the stream writer's sequence). */
export interface EventWriter {
  event(type: string, data: object): string;
  /**
   * A per-token delta event, written without building an object:
   * {type, sequence_number, item_id, output_index, [content_index], delta, [logprobs]};
   * `logprobs` is the JSON text of the array, null for none (the key left out).
   */
  delta(type: string, itemId: string, outputIndex: number, contentIndex: number | null, delta: string, logprobs: string | null): string;
}

export function textPart(text: string): TextPart {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export class ResponseOutput {
  private readonly items: OutputItem[] = [];
  private open: OutputItem | null = null;
  private readonly counts = { rs: 0, msg: 0, fc: 0 };

  /** `hex`: the response's id suffix, for item ids; `w`: null when not streaming. */
  constructor(
    private readonly hex: string,
    private readonly w: EventWriter | null,
  ) {}

  get functionCalls(): number {
    return this.items.filter((i) => i.type === 'function_call').length + (this.open?.type === 'function_call' ? 1 : 0);
  }

  /** `logprobs`: the entries of the tokens behind this text (include message.output_text.logprobs), else null. */
  text(delta: string, logprobs: readonly object[] | null = null): string {
    let out = this.open?.type === 'message' ? '' : this.begin({ id: this.id('msg'), type: 'message', status: 'in_progress', role: 'assistant', content: [] });
    const m = this.open as Extract<OutputItem, { type: 'message' }>;
    m.content[0].text += delta;
    if (logprobs !== null) m.content[0].logprobs.push(...logprobs);
    if (this.w) out += this.w.delta('response.output_text.delta', m.id, this.items.length, 0, delta, logprobs === null || logprobs.length === 0 ? '[]' : JSON.stringify(logprobs));
    return out;
  }

  reasoning(delta: string): string {
    let out =
      this.open?.type === 'reasoning' ? '' : this.begin({ id: this.id('rs'), type: 'reasoning', summary: [], content: [], encrypted_content: null, status: 'in_progress' });
    const r = this.open as Extract<OutputItem, { type: 'reasoning' }>;
    r.content[0].text += delta;
    if (this.w) out += this.w.delta('response.reasoning_text.delta', r.id, this.items.length, 0, delta, null);
    return out;
  }

  toolStart(callId: string, name: string): string {
    return this.begin({ id: this.id('fc'), type: 'function_call', call_id: callId, name, arguments: '', status: 'in_progress' });
  }

  toolArgs(delta: string): string {
    if (this.open?.type !== 'function_call') return '';
    this.open.arguments += delta;
    return this.w ? this.w.delta('response.function_call_arguments.delta', this.open.id, this.items.length, null, delta, null) : '';
  }

  /** Closes the open item; `incomplete` marks it cut short (max_output_tokens). */
  finish(incomplete: boolean): string {
    return this.close(incomplete ? 'incomplete' : 'completed');
  }

  /** The output items (complete after finish()). */
  get output(): OutputItem[] {
    return this.items;
  }

  private id(kind: 'rs' | 'msg' | 'fc'): string {
    const n = this.counts[kind]++;
    return n === 0 ? `${kind}_${this.hex}` : `${kind}_${this.hex}_${n}`;
  }


  private begin(item: OutputItem): string {
    let out = this.close('completed');
    this.open = item;
    const e = this.w ? this.w.event : null;
    if (e) out += e('response.output_item.added', { output_index: this.items.length, item: structuredClone(item) });
    if (item.type === 'message') {
      item.content.push(textPart(''));
      if (e) out += e('response.content_part.added', { item_id: item.id, output_index: this.items.length, content_index: 0, part: textPart('') });
    } else if (item.type === 'reasoning') {
      item.content.push({ type: 'reasoning_text', text: '' });
      if (e) out += e('response.content_part.added', { item_id: item.id, output_index: this.items.length, content_index: 0, part: { type: 'reasoning_text', text: '' } });
    }
    return out;
  }

  private close(status: ItemStatus): string {
    const item = this.open;
    if (item === null) return '';
    const e = this.w ? this.w.event : null;
    let out = '';
    if (e) {
      const at = { item_id: item.id, output_index: this.items.length };
      if (item.type === 'message') {
        const part = item.content[0];
        out += e('response.output_text.done', { item_id: at.item_id, output_index: at.output_index, content_index: 0, text: part.text, logprobs: part.logprobs });
        out += e('response.content_part.done', { item_id: at.item_id, output_index: at.output_index, content_index: 0, part });
      } else if (item.type === 'reasoning') {
        const part = item.content[0];
        out += e('response.reasoning_text.done', { item_id: at.item_id, output_index: at.output_index, content_index: 0, text: part.text });
        out += e('response.content_part.done', { item_id: at.item_id, output_index: at.output_index, content_index: 0, part });
      } else {
        out += e('response.function_call_arguments.done', { item_id: at.item_id, output_index: at.output_index, name: item.name, arguments: item.arguments });
      }
    }
    item.status = status;
    this.open = null;
    if (e) out += e('response.output_item.done', { output_index: this.items.length, item });
    this.items.push(item);
    return out;
  }
}
