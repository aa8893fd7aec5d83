// POST /v1/completions: one generation per prompt (strings tokenized natively, or
// token ids as given), n choices each, merged into one response or SSE stream.

import { randomHexId } from '../protocol/random-ids.js';
import { ApiError } from '../protocol/errors.js';
import { readCompletionRequest, type CompletionRequest, type Prompt } from '../protocol/completion-request.js';
import { CompletionChunkWriter, completion, type CompletionChoice } from '../protocol/completion-response.js';
import { usageOf } from '../protocol/chat-response.js';
import { completionBudget, validateForModel } from '../pipeline/preprocess.js';
import type { ParsedEvent } from '../pipeline/outputs.js';
import { generationRequest } from '../pipeline/request.js';
import { runGeneration, type GenerationSink } from '../pipeline/run.js';
import { runMerged } from '../pipeline/merge.js';
import { selectBest } from '../pipeline/best-of.js';
import type { LogprobBook } from '../pipeline/logprobs.js';
import { appendCompletionLogprobs, completionLogprobs, tokenNamer, type CompletionLogprobs } from '../protocol/logprobs-response.js';
import type { ServedModel } from '../pipeline/served-model.js';
import { modelFor, type AppContext } from './context.js';
import type { Exchange } from './exchange.js';
import { streamGeneration, type StreamFormat } from './sse.js';
import { refuseNvext, routeHints } from './route-hints.js';
import { speculativePrefillIds } from '../pipeline/speculative-prefill.js';
import { CompletionExtras, NO_OUTCOME } from './completion-extras.js';
import type { ChoiceOutcome } from '../protocol/nvext-response.js';

export function completions(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const arrived = performance.now();
    const req = readCompletionRequest(ex.body, ctx.ignoreUnsupportedFields, (h) => ex.header(h));
    const model = modelFor(ctx, req.model);
    ex.describe(model, req.stream);
    refuseNvext(req.nvext, '/v1/completions', ['annotations', 'token_data', 'use_raw_prompt']);
    const route = routeHints(req.nvext, (h) => ex.header(h));
    validateForModel(model, req.sampling, route);
    checkPromptIds(model, req.prompts);
    const trace = ex.trace ?? null;
    if (trace !== null) trace.validated(arrived);
    const prompts = req.prompts.map((p) => (p.kind === 'text' ? model.native.encode(p.text, req.addSpecialTokens) : p.ids));
    if (trace !== null) trace.tokenized(prompts.reduce((n, ids) => n + ids.length, 0));
    const budgets = prompts.map((ids) => completionBudget(model, ids.length, req.sampling.maxTokens, 'prompt'));
    // best_of > n: generate best_of candidates per prompt, with logprobs to rank them by.
    const perPrompt = req.bestOf;
    const ranked = perPrompt > req.sampling.n ? { ...req.sampling, n: perPrompt, logprobs: true, topLogprobs: req.sampling.topLogprobs ?? 0 } : req.sampling;
    // echo with logprobs: the echoed prompt gets its logprobs too, as vLLM gives them.
    const sampling = req.echo && req.sampling.logprobs ? { ...ranked, promptLogprobs: req.sampling.topLogprobs ?? 0 } : ranked;
    const books: LogprobBook[] = [];
    const requests = prompts.map((ids, i) =>
      generationRequest({
        model,
        promptIds: ids,
        sampling,
        maxTokens: budgets[i],
        requestId: prompts.length > 1 ? `${ex.engineRequestId}-${i}` : ex.engineRequestId,
        signal: ex.cancellation,
        route,
        arrived,
        skipSpecialTokens: req.skipSpecialTokens,
        collectTokenIds: req.nvext.extraFields.has('completion_token_ids'),
        limit: ex.rateLimit,
        trace,
      }),
    );
    const extras = new CompletionExtras(req, arrived, prompts.length);
    // Each prompt's generation into its part of the merged answer (its logprobs kept per prompt).
    const run = (sink: GenerationSink) =>
      runMerged(requests.length, perPrompt, sink, (k, part) =>
        runGeneration(requests[k], {
          begin(g) {
            if (g.logprobs) books[k] = g.logprobs;
            extras.begin(k, g);
            part.begin?.(g);
          },
          event: (ev) => part.event(ev),
        }),
      );
    const echoes = req.echo ? prompts.map((ids) => model.native.decode(ids, req.skipSpecialTokens)) : null;
    const logprobs = sampling.logprobs ? completionLogprobsOf(model, req, books, echoes, perPrompt, prompts) : null;
    const id = `cmpl-${randomHexId()}`;
    const created = Math.floor(Date.now() / 1000);
    const reply = req.stream ? await streamCompletion(ex, req, run, echoes, id, created, logprobs, extras) : await unaryCompletion(req, run, ex, echoes, id, created, logprobs, extras);
    // The next turn of a single-prompt exchange repeats the prompt plus this reply.
    if (req.nvext.agentHints.speculativePrefill && prompts.length === 1 && !ex.cancellation.aborted) speculativePrefillIds(model, prompts[0], reply, route, ex.engineRequestId);
  };
}

/** Token-id prompts inside the vocabulary: checked for every prompt before any text prompt is tokenized. */
function checkPromptIds(model: ServedModel, prompts: Prompt[]): void {
  const vocab = model.info.vocabSize;
  for (const p of prompts) {
    if (p.kind === 'text') continue;
    for (const id of p.ids) {
      if (id >= vocab) throw ApiError.badRequest(`token id ${id} is out of the vocabulary (size ${vocab})`, 'prompt');
    }
  }
}

/** Logprobs of a merged choice since its last delta (null when there are none). */
type LogprobSource = (merged: number) => CompletionLogprobs | null;

function completionLogprobsOf(model: ServedModel, req: CompletionRequest, taps: LogprobBook[], echoes: string[] | null, n: number, prompts: Uint32Array[]): LogprobSource {
  const name = tokenNamer((t) => model.native.decode(Uint32Array.of(t), false), req.sampling.returnTokensAsTokenIds ?? false, model);
  const k = req.sampling.topLogprobs ?? 0;
  // Offsets count from the start of each choice's text, echoed prompt included.
  const offsets = Array.from({ length: req.prompts.length * n }, (_, i) => ({ at: echoes ? [...echoes[Math.floor(i / n)]].length : 0 }));
  return (merged) => {
    const p = Math.floor(merged / n);
    const tap = taps[p];
    const list = tap.take(merged % n);
    // The echoed prompt's entries come first, with their own offsets from 0.
    const head = echoes ? tap.takePrompt(merged % n, prompts[p]) : null;
    const out = head ? completionLogprobs(head, name, k, { at: 0 }) : null;
    if (list.length === 0) return out;
    const gen = completionLogprobs(list, name, k, offsets[merged]);
    if (!out) return gen;
    appendCompletionLogprobs(out, gen);
    return out;
  };
}

interface UnaryCompletionChoice {
  index: number;
  text: string;
  finishReason: string;
  /** The generated part of `text`. */
  generated: string;
  completionTokens: number;
  cumulativeLogprob: number;
  logprobs: CompletionLogprobs | undefined;
  outcome: ChoiceOutcome;
}

/** Answers with one completion object; returns choice 0's generated text. */
async function unaryCompletion(req: CompletionRequest, run: (sink: GenerationSink) => Promise<void>, ex: Exchange, echoes: string[] | null, id: string, created: number, logprobs: LogprobSource | null, extras: CompletionExtras): Promise<string> {
  const n = req.bestOf;
  const ranking = n > req.sampling.n;
  // (A loop, not Array.from({ length }, f): V8's array-like path costs a runtime call per element.)
  const choices: UnaryCompletionChoice[] = [];
  for (let index = 0; index < req.prompts.length * n; index++) {
    choices.push({
      index,
      text: echoes ? echoes[Math.floor(index / n)] : '',
      finishReason: 'stop',
      generated: '',
      completionTokens: 0,
      cumulativeLogprob: 0,
      logprobs: undefined,
      outcome: NO_OUTCOME,
    });
  }
  const detokenize = req.sampling.detokenize !== false;
  if (logprobs) for (const c of choices) c.logprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  await run({
    event(ev) {
        if (ev.kind === 'reasoning' || ev.kind === 'tool_start' || ev.kind === 'tool_args') return; // (completions plan no parsing)
        extras.noteTime();
        if (logprobs && ev.kind !== 'end') {
          const more = logprobs(ev.index);
          if (more) {
            appendCompletionLogprobs(choices[ev.index].logprobs!, more);
            for (const v of more.token_logprobs) if (v !== null) choices[ev.index].cumulativeLogprob += v;
          }
        }
        if (ev.kind === 'text') {
          if (!detokenize) return;
          choices[ev.index].text += ev.text;
          choices[ev.index].generated += ev.text;
        } else if (ev.kind === 'finish') {
          choices[ev.index].finishReason = ev.reason;
          choices[ev.index].completionTokens = ev.completionTokens;
          choices[ev.index].outcome = { matchedStop: ev.matchedStop, tokenIds: ev.tokenIds };
        } else {
          const u = ev.usage;
          let completionTokens = u.completionTokens;
          let out: CompletionChoice[] = choices;
          let outcomes = choices.map((c) => c.outcome);
          if (ranking) {
            const kept = selectBest(choices, n, req.sampling.n);
            // Usage counts the returned choices, as vLLM's did; logprobs only when asked for.
            completionTokens = kept.reduce((s, c) => s + c.completionTokens, 0);
            out = kept.map((c) => ({ index: c.index, text: c.text, finishReason: c.finishReason, logprobs: req.sampling.logprobs ? c.logprobs : undefined }));
            choices[0].generated = kept[0].generated;
            outcomes = kept.map((c) => c.outcome);
          }
          ex.sendJson(200, completion(id, req.model, created, out, usageOf(u.promptTokens, completionTokens, u.cachedTokens), extras.response(u.promptTokens, completionTokens, outcomes)));
        }
    },
  });
  return choices[0].generated;
}

/** Streams the completion; returns choice 0's generated text. */
async function streamCompletion(ex: Exchange, req: CompletionRequest, run: (sink: GenerationSink) => Promise<void>, echoes: string[] | null, id: string, created: number, logprobs: LogprobSource | null, extras: CompletionExtras): Promise<string> {
  const lp = (i: number) => {
    const l = logprobs?.(i);
    return l ? JSON.stringify(l) : 'null';
  };
  const w = new CompletionChunkWriter(id, req.model, created);
  let reply = '';
  const n = req.sampling.n;
  const outcomes: ChoiceOutcome[] = [];
  for (let i = 0; i < req.prompts.length * n; i++) outcomes.push(NO_OUTCOME);
  const fmt: StreamFormat<ParsedEvent> = {
    start: () => (echoes ? Array.from({ length: req.prompts.length * n }, (_, i) => w.text(i, echoes[Math.floor(i / n)], null)).join('') : ''),
    event(ev) {
      extras.noteTime();
      const usage = ev.kind !== 'end' && req.continuousUsage ? usageOf(ev.usage.promptTokens, ev.usage.completionTokens, ev.usage.cachedTokens) : null;
      if (ev.kind === 'text') {
        if (req.sampling.detokenize === false) {
          const l = lp(ev.index);
          return l === 'null' && !usage ? '' : w.text(ev.index, '', usage, l);
        }
        if (ev.index === 0) reply += ev.text;
        return w.text(ev.index, ev.text, usage, lp(ev.index));
      }
      if (ev.kind === 'finish') {
        outcomes[ev.index] = { matchedStop: ev.matchedStop, tokenIds: ev.tokenIds };
        return w.finish(ev.index, ev.reason, usage, lp(ev.index));
      }
      if (ev.kind !== 'end') return ''; // (completions plan no parsing)
      const u = ev.usage;
      const nv = extras.response(u.promptTokens, u.completionTokens, outcomes);
      return (nv ? w.nvext(nv) : '') + (req.includeUsage ? w.usage(usageOf(u.promptTokens, u.completionTokens, u.cachedTokens)) : '');
    },
  };
  await streamGeneration(ex, fmt, run);
  return reply;
}
