// POST /v1/chat/completions: read and validate, tokenize natively, pick a worker,
// generate over gRPC, and answer as one JSON body or as an SSE stream.

import { randomHexId } from '../protocol/random-ids.js';
import { readChatRequest, type ChatRequest } from '../protocol/chat-request.js';
import { ChatChunkWriter, chatCompletion, usageOf, type ChatChoice } from '../protocol/chat-response.js';
import { nvextResponse, type ChoiceOutcome, type Timing } from '../protocol/nvext-response.js';
import { completionBudget, validateForModel } from '../pipeline/preprocess.js';
import { servedBy } from './served-by.js';
import { generationRequest } from '../pipeline/request.js';
import { runGeneration, type GenerationSink, type RunningGeneration } from '../pipeline/run.js';
import { chatDeltaLogprobs, chatLogprobContent, tokenNamer, type TokenNamer } from '../protocol/logprobs-response.js';
import { mayParse, planParsing, skipSpecialTokensFor, type ParsedEvent } from '../pipeline/parse-outputs.js';
import type { ServedModel } from '../pipeline/served-model.js';
import { chatProcessorOf, modelFor, type AppContext } from './context.js';
import { parseChatRequest, serveChat } from '../processors/serve-chat.js';
import type { Exchange } from './exchange.js';
import { streamGeneration, type StreamFormat } from './sse.js';
import { speculativePrefill } from '../pipeline/speculative-prefill.js';
import { promptFor, annotationEvents, imagePromptFor } from './prompt.js';
import { chatImages } from '../protocol/image-input.js';
import type { ImagePrompt } from '../pipeline/image-prompt.js';
import { routeHints } from './route-hints.js';

export function chatCompletions(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const arrived = performance.now();
    const req = readChatRequest(ex.body, ctx.ignoreUnsupportedFields, (h) => ex.header(h));
    const model = modelFor(ctx, req.model);
    ex.describe(model, req.stream);
    // A custom chat processor (spec 002) serves this model's chat: hand it the request.
    const processor = chatProcessorOf(ctx, model);
    if (processor) return serveChat(processor.current(), ex, parseChatRequest(ex.body));
    const route = routeHints(req.nvext, (h) => ex.header(h));
    validateForModel(model, req.sampling, route);
    const trace = ex.trace ?? null;
    if (trace !== null) trace.validated(arrived);
    // Image parts are looked for only when the model takes images.
    const media = model.vision === null ? null : await chatImages(ex.body, req.messages, model.vision.store.settings.fetch.maxBytes);
    let promptIds: Uint32Array;
    let images: ImagePrompt | null = null;
    if (media === null) {
      const prompt = promptFor(model, ex.body, req, req.nvext);
      // Short prompts are tokenized synchronously: no await (and no microtask hop) for them.
      promptIds = prompt instanceof Promise ? await prompt : prompt;
    } else {
      images = await imagePromptFor(model, model.vision!, ex.body, req, media.images, media.messagesJson);
      promptIds = images.ids;
    }
    if (trace !== null) trace.tokenized(promptIds.length);
    const maxTokens = completionBudget(model, promptIds.length, req.sampling.maxTokens);
    const hints = req.nvext.agentHints;
    // (No plan, and no options object for it, when nothing could be parsed.)
    const plan = !mayParse(model, req.tools !== null) ? null : planParsing(model, {
      hasTools: req.tools !== null,
      toolChoiceNone: req.toolChoice.kind === 'none',
      toolChoice: req.toolChoice,
      parallelToolCalls: req.parallelToolCalls,
      templateKwargs: req.templateKwargs,
      reasoningEffort: req.reasoningEffort,
      promptIds,
      toolsJson: req.tools ? ex.body.toString('utf8', req.tools.start, req.tools.end) : undefined,
    });
    // Detokenized, stop-checked and parsed per choice in one native push per engine message.
    const gr = generationRequest({
      model,
      promptIds,
      sampling: req.sampling,
      maxTokens,
      requestId: ex.engineRequestId,
      signal: ex.cancellation,
      route,
      arrived,
      skipSpecialTokens: skipSpecialTokensFor(model, req.skipSpecialTokens),
      parsing: plan,
      collectTokenIds: req.nvext.extraFields.has('completion_token_ids'),
      limit: ex.rateLimit,
      trace,
      images,
    });
    const timing: Timing = { arrived, dispatched: performance.now(), firstToken: null, lastToken: null };
    const id = `chatcmpl-${randomHexId()}`;
    const created = Math.floor(Date.now() / 1000);
    // Token names are needed only for logprobs.
    const namer = gr.logprobs ? tokenNamer((t) => model.native.decode(Uint32Array.of(t), false), req.sampling.returnTokensAsTokenIds ?? false, model) : null;
    const r: ChatRun = { ex, model, req, gen: null, timing, promptIds, id, created, reply: '', namer };
    const begin = (g: RunningGeneration) => {
      r.gen = g;
      // The router may have held the request in its queue: dispatch is when it left.
      timing.dispatched = g.dispatchedAt;
    };
    if (req.stream) await streamGeneration(ex, chatStream(r), (sink) => runGeneration(gr, sink), begin);
    else await runGeneration(gr, new UnaryChat(r, begin));
    // (The next turn's prefill renders the body again: not for a request with images.)
    if (hints.speculativePrefill && images === null && !ex.cancellation.aborted) speculativePrefill(model, ex.body, req, r.reply, route, ex.engineRequestId);
  };
}

interface ChatRun {
  ex: Exchange;
  model: ServedModel;
  req: ChatRequest;
  /** Set once the router chose the worker. */
  gen: RunningGeneration | null;
  timing: Timing;
  promptIds: Uint32Array;
  id: string;
  created: number;
  /** Choice 0's text, for agent_hints.speculative_prefill. */
  reply: string;
  /** Set when logprobs were asked for. */
  namer: TokenNamer | null;
}

/** The `logprobs` JSON of a streamed delta of choice `index`: its tokens since the last delta. */
function deltaLogprobs(r: ChatRun, index: number): string {
  const book = r.gen!.logprobs;
  if (!book) return 'null';
  const list = book.take(index);
  return list.length ? chatDeltaLogprobs(list, r.namer!, r.req.sampling.topLogprobs ?? 0) : 'null';
}

function noteTime(t: Timing): void {
  const now = performance.now();
  t.firstToken ??= now;
  t.lastToken = now;
}

function extras(r: ChatRun, usage: { promptTokens: number; completionTokens: number }, outcomes: ChoiceOutcome[]): Record<string, unknown> | null {
  if (r.req.nvext.extraFields.size === 0) return null;
  const g = r.gen!;
  return nvextResponse(r.req.nvext.extraFields, servedBy(g, r.req.nvext), r.timing, usage.promptTokens, usage.completionTokens, outcomes);
}

/** The unary answer: the choices collected from the events, one JSON body at the end. */
class UnaryChat implements GenerationSink {
  private readonly choices: ChatChoice[];
  private readonly outcomes: ChoiceOutcome[];
  private readonly detokenize: boolean;

  constructor(
    private readonly r: ChatRun,
    readonly begin: (g: RunningGeneration) => void,
  ) {
    const n = r.req.sampling.n;
    // Loops, not Array.from({ length: n }, f): that takes V8's generic array-like path (runtime
    // calls per element), which costs a lone request more than the rest of this constructor.
    const choices: ChatChoice[] = (this.choices = []);
    const outcomes: ChoiceOutcome[] = (this.outcomes = []);
    for (let index = 0; index < n; index++) {
      choices.push({ index, content: '', reasoning: '', toolCalls: [], finishReason: 'stop' });
      outcomes.push({ matchedStop: null, tokenIds: null });
    }
    this.detokenize = r.req.sampling.detokenize !== false;
  }

  event(ev: ParsedEvent): undefined {
    const { r, choices } = this;
    noteTime(r.timing);
    const book = r.gen!.logprobs;
    if (book && ev.kind !== 'end') (choices[ev.index].logprobs ??= []).push(...chatLogprobContent(book.take(ev.index), r.namer!, r.req.sampling.topLogprobs ?? 0));
    if (ev.kind === 'text') {
      if (this.detokenize) choices[ev.index].content += ev.text;
    }
    else if (ev.kind === 'reasoning') choices[ev.index].reasoning += ev.text;
    else if (ev.kind === 'tool_start') choices[ev.index].toolCalls[ev.call] = { id: ev.id, name: ev.name, arguments: '' };
    else if (ev.kind === 'tool_args') choices[ev.index].toolCalls[ev.call].arguments += ev.text;
    else if (ev.kind === 'finish') {
      choices[ev.index].finishReason = ev.reason;
      this.outcomes[ev.index] = { matchedStop: ev.matchedStop, tokenIds: ev.tokenIds };
    } else {
      const u = ev.usage;
      r.reply = choices[0].content;
      r.ex.sendJson(200, chatCompletion(r.id, r.req.model, r.created, choices, usageOf(u.promptTokens, u.completionTokens, u.cachedTokens), extras(r, u, this.outcomes)));
    }
    return undefined;
  }
}

/** The streamed answer's events. */
function chatStream(r: ChatRun): StreamFormat<ParsedEvent> {
  const { req } = r;
  const w = new ChatChunkWriter(r.id, req.model, r.created);
  const outcomes: ChoiceOutcome[] = [];
  for (let i = 0; i < req.sampling.n; i++) outcomes.push({ matchedStop: null, tokenIds: null });
  return {
    start: () => {
      let roles = '';
      for (let i = 0; i < req.sampling.n; i++) roles += w.role(i);
      return annotationEvents(r.model, req.nvext, r.promptIds) + roles;
    },
    event(ev) {
      noteTime(r.timing);
      const usage = (ev.kind === 'text' || ev.kind === 'finish') && req.continuousUsage ? usageOf(ev.usage.promptTokens, ev.usage.completionTokens, ev.usage.cachedTokens) : null;
      if (ev.kind === 'text') {
        if (req.sampling.detokenize === false) {
          const lp = deltaLogprobs(r, ev.index);
          return lp === 'null' && !usage ? '' : w.content(ev.index, '', usage, lp);
        }
        if (ev.index === 0 && req.nvext.agentHints.speculativePrefill) r.reply += ev.text;
        return w.content(ev.index, ev.text, usage, deltaLogprobs(r, ev.index));
      }
      if (ev.kind === 'reasoning') return w.reasoning(ev.index, ev.text, deltaLogprobs(r, ev.index));
      if (ev.kind === 'tool_start') return w.toolStart(ev.index, ev.call, ev.id, ev.name);
      if (ev.kind === 'tool_args') return w.toolArgs(ev.index, ev.call, ev.text);
      if (ev.kind === 'finish') {
        outcomes[ev.index] = { matchedStop: ev.matchedStop, tokenIds: ev.tokenIds };
        return w.finish(ev.index, ev.reason, usage, deltaLogprobs(r, ev.index));
      }
      const u = ev.usage;
      const nv = extras(r, u, outcomes);
      return (nv ? w.nvext(nv) : '') + (req.includeUsage ? w.usage(usageOf(u.promptTokens, u.completionTokens, u.cachedTokens)) : '');
    },
  };
}
