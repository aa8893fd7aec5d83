// POST /v1/completions: one generation per prompt (strings tokenized natively, or
// token ids as given), n choices each, merged into one response or SSE stream.

import { randomUUID } from 'node:crypto';
import { ApiError } from '../protocol/errors.js';
import { readCompletionRequest, type CompletionRequest, type Prompt } from '../protocol/completion-request.js';
import type { NvExt } from '../protocol/nvext.js';
import { CompletionChunkWriter, completion, type CompletionChoice } from '../protocol/completion-response.js';
import { usageOf } from '../protocol/chat-response.js';
import { completionBudget } from '../pipeline/preprocess.js';
import { generate } from '../pipeline/generate.js';
import { decodeOutputs, outputRules, type OutputEvent } from '../pipeline/outputs.js';
import { mergeOutputs } from '../pipeline/merge.js';
import type { ServedModel } from '../pipeline/served-model.js';
import { modelFor, type AppContext } from './context.js';
import type { Exchange } from './exchange.js';
import { streamEvents } from './sse.js';

export function completions(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const arrived = performance.now();
    const req = readCompletionRequest(ex.body, ctx.ignoreUnsupportedFields, (h) => ex.header(h));
    const model = modelFor(ctx, req.model);
    ex.describe(model, req.stream);
    refuseChatOnlyNvext(req.nvext);
    const prompts = req.prompts.map((p) => promptIds(model, p, req.addSpecialTokens));
    const budgets = prompts.map((ids) => completionBudget(model, ids.length, req.sampling.maxTokens));
    const streams = prompts.map((ids, i) => {
      const route = { workerId: req.nvext.backendInstanceId ?? req.nvext.decodeWorkerId, dpRank: req.nvext.dpRank };
      const gen = generate(model, ids, { ...req.sampling, maxTokens: budgets[i] }, prompts.length > 1 ? `${ex.requestId}-${i}` : ex.requestId, ex.signal, route);
      return decodeOutputs(model, gen, { ...outputRules(req.sampling, budgets[i]), n: req.sampling.n, skipSpecialTokens: req.skipSpecialTokens, arrived });
    });
    const outputs = mergeOutputs(streams, req.sampling.n);
    const echoes = req.echo ? prompts.map((ids) => model.native.decode(ids, req.skipSpecialTokens)) : null;
    const id = `cmpl-${randomUUID().replaceAll('-', '')}`;
    const created = Math.floor(Date.now() / 1000);
    if (req.stream) await streamCompletion(ex, req, outputs, echoes, id, created);
    else await unaryCompletion(ex, req, outputs, echoes, id, created);
  };
}

/** nvext fields that only the chat path implements so far are refused here, not dropped. */
function refuseChatOnlyNvext(n: NvExt): void {
  const used = [n.extraFields.size > 0 && 'extra_fields', n.annotations.length > 0 && 'annotations', n.tokenData && 'token_data', n.useRawPrompt && 'use_raw_prompt'].filter(Boolean);
  if (used.length > 0) {
    throw new ApiError(400, `\`nvext.${used[0]}\` is not supported on /v1/completions yet`, { param: `nvext.${used[0]}`, code: 'unsupported_parameter' });
  }
}

function promptIds(model: ServedModel, p: Prompt, addSpecialTokens: boolean): Uint32Array {
  if (p.kind === 'text') return model.native.encode(p.text, addSpecialTokens);
  const vocab = model.info.vocabSize;
  for (const id of p.ids) {
    if (id >= vocab) throw ApiError.badRequest(`token id ${id} is out of the vocabulary (size ${vocab})`, 'prompt');
  }
  return p.ids;
}

async function unaryCompletion(ex: Exchange, req: CompletionRequest, outputs: AsyncIterable<OutputEvent>, echoes: string[] | null, id: string, created: number) {
  const n = req.sampling.n;
  const choices: CompletionChoice[] = Array.from({ length: req.prompts.length * n }, (_, index) => ({
    index,
    text: echoes ? echoes[Math.floor(index / n)] : '',
    finishReason: 'stop',
  }));
  for await (const ev of outputs) {
    if (ev.kind === 'text') choices[ev.index].text += ev.text;
    else if (ev.kind === 'finish') choices[ev.index].finishReason = ev.reason;
    else {
      const u = ev.usage;
      ex.sendJson(200, completion(id, req.model, created, choices, usageOf(u.promptTokens, u.completionTokens, u.cachedTokens)));
    }
  }
}

async function streamCompletion(ex: Exchange, req: CompletionRequest, outputs: AsyncIterable<OutputEvent>, echoes: string[] | null, id: string, created: number) {
  const w = new CompletionChunkWriter(id, req.model, created);
  const n = req.sampling.n;
  await streamEvents(ex, outputs, {
    start: () => (echoes ? Array.from({ length: req.prompts.length * n }, (_, i) => w.text(i, echoes[Math.floor(i / n)], null)).join('') : ''),
    event(ev) {
      const usage = ev.kind !== 'end' && req.continuousUsage ? usageOf(ev.usage.promptTokens, ev.usage.completionTokens, ev.usage.cachedTokens) : null;
      if (ev.kind === 'text') return w.text(ev.index, ev.text, usage);
      if (ev.kind === 'finish') return w.finish(ev.index, ev.reason, usage);
      const u = ev.usage;
      return req.includeUsage ? w.usage(usageOf(u.promptTokens, u.completionTokens, u.cachedTokens)) : '';
    },
  });
}
