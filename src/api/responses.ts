// POST /v1/responses: the Responses API run through the chat pipeline. With the model's
// parsers, reasoning becomes `reasoning` output items and tool calls `function_call`
// items; nvext.use_raw_prompt skips the template as on chat completions.

import { randomHexId } from '../protocol/random-ids.js';
import { readResponsesRequest } from '../protocol/responses-request.js';
import { ResponsesStreamWriter, responseObject, responsesUsage, type ResponseState } from '../protocol/responses-response.js';
import type { ParsedEvent } from '../pipeline/parse-outputs.js';
import { ResponseOutput } from '../protocol/responses-output.js';
import type { ServedModel } from '../pipeline/served-model.js';
import { chatProcessorOf, modelFor, type AppContext } from './context.js';
import { serveResponses } from '../processors/serve-responses.js';
import type { Exchange } from './exchange.js';
import { streamGeneration, type StreamFormat } from './sse.js';
import { endChatTurn, startChatTurn, type ChatTurn, type ChatTurnRun } from './chat-turn.js';
import { runGeneration, type GenerationSink, type RunningGeneration } from '../pipeline/run.js';
import type { LogprobBook } from '../pipeline/logprobs.js';
import { chatLogprobContent, tokenNamer, type ChatLogprobEntry, type TokenNamer } from '../protocol/logprobs-response.js';
import { conversationPrompt } from '../protocol/responses-chain.js';
import { chainItems, persist, tenantOf } from './responses-state.js';

export function responses(ctx: AppContext) {
  return async (ex: Exchange): Promise<void> => {
    const arrived = performance.now();
    const req = readResponsesRequest(ex.body, ctx.ignoreUnsupportedFields, (h) => ex.header(h));
    const model = modelFor(ctx, req.model);
    ex.describe(model, req.stream);
    const tenant = tenantOf(ctx, ex);
    const turn: ChatTurn = {
      endpoint: '/v1/responses',
      prompt: req.previousResponseId === null ? req.prompt : conversationPrompt(req, await chainItems(ctx, tenant, req)),
      nvext: req.nvext,
      maxTokens: req.maxOutputTokens,
      sampling: { temperature: req.temperature, topP: req.topP, constraint: req.constraint, logprobs: req.logprobs || undefined, topLogprobs: req.logprobs ? req.topLogprobs : undefined },
      toolChoice: req.toolMode,
      parallelToolCalls: req.parallelToolCalls,
    };
    const processor = chatProcessorOf(ctx, model);
    if (processor) return serveResponses(processor.current(), ex, model, req, turn);
    const run = await startChatTurn(model, ex, arrived, turn);
    const hex = randomHexId();
    const state: ResponseState = { id: `resp_${hex}`, hex, createdAt: Math.floor(Date.now() / 1000), req, store: req.store && !!ctx.responseStore };
    // Stored (durably) before the client sees it complete: the JSON body, or response.completed.
    const save: Save = (response) => persist(ctx, tenant, req, response);
    const lp = req.logprobs ? new OutputLogprobs(model, req.topLogprobs) : null;
    const reply = req.stream ? await streamResponse(ex, model, state, run, save, lp) : await unaryResponse(ex, model, state, run, save, lp);
    endChatTurn(model, ex, turn, run, reply);
  };
}

type Save = (response: ReturnType<typeof responseObject>) => Promise<void>;

/**
 * The logprobs behind each output_text delta (include message.output_text.logprobs). Only
 * output_text carries logprobs: the entries of tokens that became reasoning or a tool call,
 * or that ended the output (a stop string, EOS), are dropped.
 */
class OutputLogprobs {
  private book: LogprobBook | null = null;
  private readonly namer: TokenNamer;

  constructor(
    model: ServedModel,
    private readonly top: number,
  ) {
    this.namer = tokenNamer((t) => model.native.decode(Uint32Array.of(t), false), false, model);
  }

  readonly begin = (g: RunningGeneration): void => {
    this.book = g.logprobs;
  };

  /** The entries since the last call, as OpenAI's logprob objects. */
  take(): ChatLogprobEntry[] {
    return this.book ? chatLogprobContent(this.book.take(0), this.namer, this.top) : [];
  }

  drop(): void {
    this.book?.take(0);
  }
}

/** One parsed output event into the output items; returns the stream events ('' when not streaming). */
function addEvent(o: ResponseOutput, ev: ParsedEvent, lp: OutputLogprobs | null): string {
  if (ev.kind === 'text') return o.text(ev.text, lp ? lp.take() : null);
  lp?.drop();
  if (ev.kind === 'reasoning') return o.reasoning(ev.text);
  if (ev.kind === 'tool_start') return o.toolStart(ev.id, ev.name);
  if (ev.kind === 'tool_args') return o.toolArgs(ev.text);
  return '';
}

/**
 * usage.output_tokens_details.reasoning_tokens: the reasoning text re-encoded with the
 * model's tokenizer (the parsers see text, not token ids; a token split across the
 * reasoning boundary may be counted on either side).
 */
function reasoningTokens(model: ServedModel, o: ResponseOutput): number {
  let text = '';
  for (const i of o.output) if (i.type === 'reasoning') text += i.content[0].text;
  return text === '' ? 0 : model.native.encode(text, false).length;
}

function replyText(o: ResponseOutput): string {
  return o.output.map((i) => (i.type === 'message' ? i.content[0].text : '')).join('');
}

/** Answers with one response object; returns its text. */
async function unaryResponse(ex: Exchange, model: ServedModel, s: ResponseState, run: ChatTurnRun, save: Save, lp: OutputLogprobs | null): Promise<string> {
  const o = new ResponseOutput(s.hex, null);
  let finish = 'stop';
  await runGeneration(run.request, {
    begin: lp?.begin,
    event(ev) {
      if (ev.kind === 'finish') finish = ev.reason;
      else if (ev.kind === 'end') {
        o.finish(finish === 'length');
        const u = ev.usage;
        const response = responseObject(s, o.output, finish, responsesUsage(u.promptTokens, u.completionTokens, u.cachedTokens, reasoningTokens(model, o)));
        return save(response).then(() => ex.sendJson(200, JSON.stringify(response)));
      } else addEvent(o, ev, lp);
    },
  });
  return replyText(o);
}

/** Streams the response events; returns the text. */
async function streamResponse(ex: Exchange, model: ServedModel, s: ResponseState, run: ChatTurnRun, save: Save, lp: OutputLogprobs | null): Promise<string> {
  const w = new ResponsesStreamWriter(s);
  const o = new ResponseOutput(s.hex, w);
  let finish = 'stop';
  let closing = '';
  // The last items close and the response is stored before the end event is written.
  const atEnd = (ev: Extract<ParsedEvent, { kind: 'end' }>): Promise<void> => {
    const u = ev.usage;
    closing = o.finish(finish === 'length');
    return save(responseObject(s, o.output, finish, responsesUsage(u.promptTokens, u.completionTokens, u.cachedTokens, reasoningTokens(model, o))));
  };
  const fmt: StreamFormat<ParsedEvent> = {
    start: () => w.start(),
    event(ev) {
      if (ev.kind === 'finish') {
        finish = ev.reason;
        return '';
      }
      if (ev.kind === 'end') {
        const u = ev.usage;
        return closing + w.end(finish, responsesUsage(u.promptTokens, u.completionTokens, u.cachedTokens, reasoningTokens(model, o)), o.output);
      }
      return addEvent(o, ev, lp);
    },
    error: (err) => w.error(err),
    done: '',
  };
  await streamGeneration(ex, fmt, (sink) => runGeneration(run.request, savedBeforeEnd(sink, atEnd)), lp?.begin);
  return replyText(o);
}

/** `sink`, with `atEnd` awaited when the end event arrives and before it is passed on (the generation waits). */
function savedBeforeEnd(sink: GenerationSink, atEnd: (ev: Extract<ParsedEvent, { kind: 'end' }>) => Promise<void>): GenerationSink {
  return {
    begin: sink.begin,
    event: (ev) => (ev.kind === 'end' ? atEnd(ev).then(() => sink.event(ev)) : sink.event(ev)),
  };
}
