// The native core (native/core via native/node, napi-rs): model card, tokenizer, chat
// template and incremental detokenizer. Messages go in as byte spans of the request body
// and token ids come back as Uint32Arrays — no JS object trees on the hot path.
// See /work/shared/DESIGN.md ("Bytes in, bytes out").
//
// Errors: every method throws a plain Error. `code === 'InvalidArg'` means the request is at
// fault (bad messages JSON, template raise_exception, bad kwargs, bad span): answer 400 with
// `message` (e.g. "chat template error: ...", "invalid messages JSON: ... at line 1 column 17").
// Anything else (`code === 'GenericFailure'`) is a server-side failure.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface ModelInfo {
  /** config.json max_position_embeddings (or its equivalents); null when unknown. */
  contextLength: number | null;
  /** generation_config.json ∪ config.json ∪ tokenizer eos_token ids. */
  eosTokenIds: number[];
  bosToken: string | null;
  eosToken: string | null;
  /** Vocabulary size including added tokens. */
  vocabSize: number;
  hasChatTemplate: boolean;
}

/** A loaded Hugging Face model folder (tokenizer.json + optional configs). */
export interface Model {
  info(): ModelInfo;
  encode(text: string, addSpecialTokens: boolean): Uint32Array;
  decode(ids: Uint32Array, skipSpecialTokens: boolean): string;
  tokenToId(token: string): number | null;
  idToToken(id: number): string | null;
  /**
   * Renders the chat template over `body[msgStart, msgEnd)` (the messages JSON array) and
   * `body[toolsStart, toolsEnd)` (the tools array, or -1/-1). `kwargsJson` is a JSON object
   * of extra template kwargs (e.g. `{"enable_thinking":false}`) or null.
   */
  renderChat(
    body: Uint8Array, msgStart: number, msgEnd: number, toolsStart: number, toolsEnd: number,
    addGenerationPrompt: boolean, kwargsJson: string | null,
  ): string;
  /** renderChat + encode without adding special tokens (the template writes BOS). */
  encodeChat(
    body: Uint8Array, msgStart: number, msgEnd: number, toolsStart: number, toolsEnd: number,
    addGenerationPrompt: boolean, kwargsJson: string | null,
  ): Uint32Array;
  /** encodeChat on the libuv thread pool, for long prompts (keeps the event loop free). */
  encodeChatAsync(
    body: Uint8Array, msgStart: number, msgEnd: number, toolsStart: number, toolsEnd: number,
    addGenerationPrompt: boolean, kwargsJson: string | null,
  ): Promise<Uint32Array>;
  /** The messages' text concatenated (no separator, no template, no special tokens), tokenized. */
  encodeRawMessages(body: Uint8Array, msgStart: number, msgEnd: number): Uint32Array;
}

export interface ModelConstructor {
  /** Loads a model folder; throws "not a model folder: <path> (...)" when it is not one. */
  load(dir: string): Model;
}

/** One per generated sequence: turns token ids into text as they arrive. */
export interface Detokenizer {
  /** Adds ids; returns only the text that became final (never half a character). */
  push(ids: Uint32Array): string;
  /** The text still held back; call once at the end. */
  finish(): string;
}

export interface DetokenizerConstructor {
  new (model: Model, skipSpecialTokens: boolean): Detokenizer;
}

interface CoreAddon {
  Model: ModelConstructor;
  Detokenizer: DetokenizerConstructor;
}

/** Where the built addon lives: `npm run build:native` writes native/node/portico_native.node. */
function addonPath(): string {
  const override = process.env.PORTICO_NATIVE_CORE;
  if (override) return override;
  const candidates = [
    // compiled: dist/src/native/core.js -> repo root is three levels up
    new URL('../../../native/node/portico_native.node', import.meta.url),
    // run from source (src/native/core.ts with a TS loader): two levels up
    new URL('../../native/node/portico_native.node', import.meta.url),
  ].map((u) => fileURLToPath(u));
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new Error(`Portico native core is not built: run \`npm run build:native\` (looked for ${candidates[0]})`);
  }
  return found;
}

const addon = createRequire(import.meta.url)(addonPath()) as CoreAddon;

export const Model: ModelConstructor = addon.Model;
export const Detokenizer: DetokenizerConstructor = addon.Detokenizer;

/** True when a native error is the client's fault (answer 400 with its message). */
export function isClientError(err: unknown): boolean {
  return err instanceof Error && (err as Error & { code?: unknown }).code === 'InvalidArg';
}
