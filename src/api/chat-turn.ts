// The shared run of the APIs that reshape their request into one chat turn
// (/v1/messages, /v1/responses): their nvext refusals, routing hints, the template
// (or the raw prompt), the token budget, one generation, its decoding and the
// parsing plan; and, once answered, the speculative prefill of the next turn. Each
// API keeps its own request reading and answer shapes.

import type { RouteHints } from '../pipeline/generate.js';
import { generationRequest, type GenerationRequest } from '../pipeline/request.js';
import { planParsing, skipSpecialTokensFor, type ParsingPlan } from '../pipeline/parse-outputs.js';
import { tokenizeChat, completionBudget, validateForModel } from '../pipeline/preprocess.js';
import type { ServedModel } from '../pipeline/served-model.js';
import { speculativePrefill } from '../pipeline/speculative-prefill.js';
import type { NvExt } from '../protocol/nvext.js';
import type { SamplingOptions } from '../protocol/sampling.js';
import type { TemplateBody } from '../protocol/template-body.js';
import type { ToolChoice } from '../protocol/tools.js';
import type { Exchange } from './exchange.js';
import { refuseNvext, routeHints } from './route-hints.js';
import { imagePromptFor, visionOf } from './prompt.js';

export interface ChatTurn {
  /** The endpoint named in nvext refusals. */
  endpoint: string;
  prompt: TemplateBody;
  nvext: NvExt;
  /** The request's output token limit, if any. */
  maxTokens: number | undefined;
  sampling: Pick<SamplingOptions, 'temperature' | 'topP' | 'topK' | 'constraint' | 'logprobs' | 'topLogprobs'>;
  stop?: string[];
  toolChoice: ToolChoice;
  /** false: at most one tool call comes back (parsed, not only in the guided schema). */
  parallelToolCalls: boolean;
}

export interface ChatTurnRun {
  promptIds: Uint32Array;
  route: RouteHints;
  /** The turn's one generation (its output parsed by `plan`), for runGeneration. */
  request: GenerationRequest;
  plan: ParsingPlan | null;
}

/** Renders, budgets and starts the turn's one generation; `arrived` is when the request came in. */
export async function startChatTurn(model: ServedModel, ex: Exchange, arrived: number, t: ChatTurn): Promise<ChatTurnRun> {
  refuseNvext(t.nvext, t.endpoint, ['extra_fields', 'annotations', 'token_data', 'greed_sampling']);
  const route = routeHints(t.nvext, (h) => ex.header(h));
  validateForModel(model, null, route);
  const trace = ex.trace ?? null;
  if (trace !== null) trace.validated(arrived);
  const prompt = t.nvext.useRawPrompt ? { ...t.prompt, useRawPrompt: true } : t.prompt;
  const images = prompt.images.length === 0 ? null : await imagePromptFor(model, visionOf(model, prompt.images), prompt.body, prompt, prompt.images, null);
  const promptIds = images === null ? await tokenizeChat(model, prompt.body, prompt) : images.ids;
  if (trace !== null) trace.tokenized(promptIds.length);
  const maxTokens = completionBudget(model, promptIds.length, t.maxTokens, t.endpoint === '/v1/responses' ? 'input' : 'messages');
  const tools = t.prompt.tools;
  const plan = planParsing(model, {
    hasTools: tools !== null,
    toolChoiceNone: t.toolChoice.kind === 'none',
    templateKwargs: t.prompt.templateKwargs,
    reasoningEffort: t.prompt.reasoningEffort,
    promptIds,
    toolsJson: tools ? t.prompt.body.toString('utf8', tools.start, tools.end) : undefined,
    toolChoice: t.toolChoice,
    parallelToolCalls: t.parallelToolCalls,
  });
  // Detokenized, stop-checked and parsed in one native push per engine message.
  const request = generationRequest({
    model,
    promptIds,
    sampling: { n: 1, ...t.sampling, stop: t.stop },
    maxTokens,
    requestId: ex.engineRequestId,
    signal: ex.cancellation,
    route,
    arrived,
    skipSpecialTokens: skipSpecialTokensFor(model, undefined),
    parsing: plan,
    limit: ex.rateLimit,
    trace,
    images,
  });
  return { promptIds, route, request, plan };
}

/** After the answer: the next turn's prompt (this one plus `reply`) is prefilled when nvext asks for it. */
export function endChatTurn(model: ServedModel, ex: Exchange, t: ChatTurn, run: ChatTurnRun, reply: string): void {
  if (t.nvext.agentHints.speculativePrefill && !ex.cancellation.aborted) speculativePrefill(model, t.prompt.body, t.prompt, reply, run.route, ex.engineRequestId);
}
