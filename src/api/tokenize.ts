// POST /tokenize and POST /detokenize, in vLLM's response shapes.

import { ApiError } from '../protocol/errors.js';
import { readDetokenizeRequest, readTokenizeRequest } from '../protocol/tokenize-request.js';
import { renderFailure, tokenizeChat } from '../pipeline/preprocess.js';
import { modelFor, type AppContext } from './context.js';
import { chatImages } from '../protocol/image-input.js';
import { imagePromptFor } from './prompt.js';
import type { Exchange } from './exchange.js';

export function tokenize(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const req = readTokenizeRequest(ex.body, ctx.ignoreUnsupportedFields);
    const model = modelFor(ctx, req.model);
    let ids: Uint32Array;
    // Chat messages with images (a model that takes them): each expands to its tokens.
    const media = req.kind === 'chat' && model.vision !== null ? await chatImages(ex.body, req.messages, model.vision.store.settings.fetch.maxBytes) : null;
    try {
      ids =
        media !== null && req.kind === 'chat'
          ? (await imagePromptFor(model, model.vision!, ex.body, { messages: req.messages, tools: req.tools, useRawPrompt: false, addGenerationPrompt: req.addGenerationPrompt, templateKwargs: req.templateKwargs, continueFinal: req.continueFinal }, media.images, media.messagesJson)).ids
          : req.kind === 'prompt'
          ? model.native.encode(req.prompt, req.addSpecialTokens)
          : req.continueFinal !== null
          ? await tokenizeChat(model, ex.body, { messages: req.messages, tools: req.tools, useRawPrompt: false, addGenerationPrompt: false, templateKwargs: req.templateKwargs, continueFinal: req.continueFinal })
          : await model.native.encodeChatAsync(ex.body, req.messages.start, req.messages.end, req.tools?.start ?? -1, req.tools?.end ?? -1, req.addGenerationPrompt, req.templateKwargs);
    } catch (err) {
      renderFailure(err);
    }
    const tokens = Array.from(ids);
    const out: Record<string, unknown> = { count: tokens.length, max_model_len: model.info.contextLength, tokens };
    if (req.returnTokenStrs) out.token_strs = tokens.map((t) => model.native.idToToken(t));
    ex.sendJson(200, JSON.stringify(out));
  };
}

export function detokenize(ctx: AppContext) {
  return (ex: Exchange): void => {
    const req = readDetokenizeRequest(ex.body, ctx.ignoreUnsupportedFields);
    const model = modelFor(ctx, req.model);
    const vocab = model.info.vocabSize;
    for (const t of req.tokens) {
      if (t >= vocab) throw ApiError.badRequest(`token id ${t} is out of the vocabulary (size ${vocab})`, 'tokens');
    }
    ex.sendJson(200, JSON.stringify({ prompt: model.native.decode(req.tokens, req.skipSpecialTokens) }));
  };
}
