// POST /tokenize and /detokenize (vLLM's shapes): a prompt string or chat messages in,
// token ids out; token ids in, text out.

import { ApiError } from './errors.js';
import { requireModel } from './model-field.js';
import { admit } from './admission.js';
import { readPromptEnd } from './continue-final.js';
import { Fields, FieldTable, type Span } from './fields.js';

const TOKENIZE_FIELDS = ['model', 'prompt', 'messages', 'tools', 'add_special_tokens', 'add_generation_prompt', 'continue_final_message', 'chat_template_kwargs', 'return_token_strs'] as const;
const DETOKENIZE_FIELDS = ['model', 'tokens', 'skip_special_tokens'] as const;

let tokenizeTable: FieldTable<(typeof TOKENIZE_FIELDS)[number]> | null = null;
let detokenizeTable: FieldTable<(typeof DETOKENIZE_FIELDS)[number]> | null = null;

export type TokenizeRequest = {
  model: string;
  addSpecialTokens: boolean;
  returnTokenStrs: boolean;
} & (
  | { kind: 'prompt'; prompt: string }
  | { kind: 'chat'; messages: Span; tools: Span | null; addGenerationPrompt: boolean; continueFinal: string | null; templateKwargs: string | null }
);

export function readTokenizeRequest(body: Buffer, ignoreUnsupported: boolean): TokenizeRequest {
  tokenizeTable ??= new FieldTable(TOKENIZE_FIELDS);
  const f = Fields.scan(body, tokenizeTable);
  admit(f.unknown, '', ignoreUnsupported);
  const model = requireModel(f);
  const returnTokenStrs = f.boolean('return_token_strs') ?? false;
  const prompt = f.string('prompt');
  const messages = f.array('messages');
  if ((prompt === undefined) === (messages === undefined)) {
    throw ApiError.badRequest('give exactly one of `prompt` or `messages`', prompt === undefined ? 'prompt' : 'messages');
  }
  if (prompt !== undefined) return { kind: 'prompt', model, prompt, addSpecialTokens: f.boolean('add_special_tokens') ?? true, returnTokenStrs };
  if (messages!.length === 0) throw ApiError.badRequest('`messages` must not be empty', 'messages');
  const tools = f.array('tools');
  const kw = f.object('chat_template_kwargs');
  return {
    kind: 'chat',
    model,
    messages: messages!,
    tools: tools && tools.length > 0 ? tools : null,
    ...readPromptEnd(f.boolean('continue_final_message'), f.boolean('add_generation_prompt'), () => body.toString('utf8', messages!.start, messages!.end)),
    templateKwargs: kw ? body.toString('utf8', kw.start, kw.end) : null,
    addSpecialTokens: f.boolean('add_special_tokens') ?? false,
    returnTokenStrs,
  };
}

export interface DetokenizeRequest {
  model: string;
  tokens: Uint32Array;
  skipSpecialTokens: boolean;
}

export function readDetokenizeRequest(body: Buffer, ignoreUnsupported: boolean): DetokenizeRequest {
  detokenizeTable ??= new FieldTable(DETOKENIZE_FIELDS);
  const f = Fields.scan(body, detokenizeTable);
  admit(f.unknown, '', ignoreUnsupported);
  const model = requireModel(f);
  if (!f.array('tokens')) throw ApiError.badRequest('`tokens` is required', 'tokens');
  const list = JSON.parse(f.raw('tokens')!) as unknown[];
  const tokens = new Uint32Array(list.length);
  list.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) {
      throw ApiError.badRequest(`\`tokens\` must hold non-negative integer token ids; item ${i} is ${JSON.stringify(v)}`, 'tokens');
    }
    tokens[i] = v;
  });
  return { model, tokens, skipSpecialTokens: f.boolean('skip_special_tokens') ?? false };
}
