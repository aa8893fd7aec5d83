// POST /v1/embeddings: read and validate, tokenize each input (or take its token
// ids), send every input through the router to a worker's Embed rpc, then truncate
// to `dimensions` if asked and answer as floats or base64.

import { ApiError } from '../protocol/errors.js';
import { readEmbeddingRequest, type EmbeddingInput } from '../protocol/embedding-request.js';
import { embeddingList, truncateNormalised } from '../protocol/embedding-response.js';
import { embed } from '../pipeline/embed.js';
import type { ServedModel } from '../pipeline/served-model.js';
import { modelFor, type AppContext } from './context.js';
import type { Exchange } from './exchange.js';
import { refuseNvext, routeHints } from './route-hints.js';
import { validateForModel } from '../pipeline/preprocess.js';

/** Texts above this many characters are tokenized off the event loop. */
const ASYNC_CHARS = 1024;

/** The embedding dimension each model's workers answered with, once known. */
const knownDims = new WeakMap<ServedModel, number>();

export function embeddings(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const req = readEmbeddingRequest(ex.body, ctx.ignoreUnsupportedFields, (h) => ex.header(h));
    const model = modelFor(ctx, req.model);
    ex.describe(model, false);
    refuseNvext(req.nvext, '/v1/embeddings', ['extra_fields', 'annotations', 'token_data', 'use_raw_prompt', 'greed_sampling', 'speculative_prefill']);
    const known = knownDims.get(model);
    if (req.dimensions !== undefined && known !== undefined) checkDimensions(req.dimensions, known);
    const route = routeHints(req.nvext, (h) => ex.header(h));
    validateForModel(model, null, route);
    req.inputs.forEach((input, i) => checkIds(model, input, req.inputs.length > 1 ? `input[${i}]` : 'input'));
    const ids = await Promise.all(req.inputs.map((input, i) => inputIds(model, input, req.inputs.length > 1 ? `input[${i}]` : 'input')));
    // The key's rate limits: one request, every input's tokens, a place while the workers embed.
    const limit = ex.rateLimit ?? null;
    limit?.admit(ids.reduce((n, x) => n + x.length, 0));
    // One failed input ends the others: their answers would be thrown away.
    const stop = new AbortController();
    const signal = AbortSignal.any([ex.signal, stop.signal]);
    let results;
    try {
      results = await Promise.all(ids.map((x, i) => embed(model, x, ids.length > 1 ? `${ex.engineRequestId}-${i}` : ex.engineRequestId, signal, route)));
    } catch (err) {
      stop.abort();
      throw err;
    } finally {
      limit?.release();
    }
    const dim = results[0]!.embedding.length;
    knownDims.set(model, dim);
    if (req.dimensions !== undefined) checkDimensions(req.dimensions, dim);
    const vectors = results.map((r) => (req.dimensions !== undefined && req.dimensions < r.embedding.length ? truncateNormalised(r.embedding, req.dimensions) : r.embedding));
    const tokens = results.reduce((a, r) => a + r.promptTokens, 0);
    ex.sendJson(200, embeddingList(req.model, vectors, req.encodingFormat, tokens));
  };
}

function checkDimensions(dimensions: number, dim: number): void {
  if (dimensions > dim) {
    throw ApiError.badRequest(`\`dimensions\` must be at most ${dim}, the model's embedding size; got ${dimensions}`, 'dimensions');
  }
}

/** Token-id inputs inside the vocabulary, for every input before any text is tokenized. */
function checkIds(model: ServedModel, input: EmbeddingInput, name: string): void {
  if (input.kind === 'text') return;
  const vocab = model.info.vocabSize;
  for (const id of input.ids) {
    if (id >= vocab) throw ApiError.badRequest(`\`${name}\` holds token id ${id}, outside the vocabulary (size ${vocab})`, 'input');
  }
}

async function inputIds(model: ServedModel, input: EmbeddingInput, name: string): Promise<Uint32Array> {
  let ids: Uint32Array;
  if (input.kind === 'text') {
    ids = input.text.length > ASYNC_CHARS ? await model.native.encodeAsync(input.text, true) : model.native.encode(input.text, true);
  } else {
    ids = input.ids;
  }
  const ctx = model.info.contextLength;
  if (ctx === null && ids.length > model.maxPromptTokens) {
    throw ApiError.badRequest(
      `\`${name}\` has ${ids.length} tokens; this server accepts at most ${model.maxPromptTokens} (--max-prompt-tokens) while the model's context length is unknown. Please reduce the length of the input.`,
      'input',
      'context_length_exceeded',
    );
  }
  if (ctx !== null && ids.length > ctx) {
    throw ApiError.badRequest(
      `This model's maximum context length is ${ctx} tokens. However, \`${name}\` has ${ids.length} tokens. Please reduce the length of the input.`,
      'input',
      'context_length_exceeded',
    );
  }
  if (ids.length === 0) throw ApiError.badRequest(`\`${name}\` tokenizes to no tokens`, 'input');
  return ids;
}
