// One inference request on the shared request path: the same checks as the HTTP
// completions endpoint (token ids inside the vocabulary, the context length and token
// budget), then one GenerationRequest run by runGeneration (router, engine, cancellation,
// stop rules, detokenizer) into the KServe response sink (./response.ts).

import { ApiError } from '../protocol/errors.js';
import { completionBudget, validateForModel } from '../pipeline/preprocess.js';
import { generationRequest } from '../pipeline/request.js';
import { runGeneration } from '../pipeline/run.js';
import type { ServedModel } from '../pipeline/served-model.js';
import type { Cancellation } from '../engine/types.js';
import type { ModelInferResponse } from '../gen/kserve/grpc_service_pb.js';
import type { InferRequest } from './request.js';
import { InferResponseSink } from './response.js';
import type { LimitTicket } from '../pipeline/rate-limit.js';
import type { RequestTrace } from '../tracing/request-trace.js';

export interface InferCall {
  model: ServedModel;
  req: InferRequest;
  /** Unique per request: what the engine request carries (never the client's id). */
  engineRequestId: string;
  cancellation: Cancellation;
  /** ModelStreamInfer: mark responses with triton_final_response. */
  decoupled: boolean;
  /** When the request arrived (performance.now()), for time-to-first-token. */
  arrived: number;
  /** The rate-limit budget of the call's API key, or null: not limited. */
  limit?: LimitTicket | null;
  /** The request's trace (tracing on), else null. */
  trace: RequestTrace | null;
}

/** Runs the generation; `emit` gets each response as it is made. Failures throw ApiError. */
export async function runInfer(call: InferCall, emit: (r: ModelInferResponse) => void): Promise<void> {
  const { model, req } = call;
  validateForModel(model, req.sampling, {});
  const trace = call.trace;
  if (trace !== null) trace.validated(call.arrived);
  let ids: Uint32Array;
  if (req.prompt.kind === 'text') {
    const t0 = performance.now();
    ids = model.native.encode(req.prompt.text, true);
    model.stats.tokenizer.observe((performance.now() - t0) / 1000);
  } else {
    ids = req.prompt.ids;
    const vocab = model.info.vocabSize;
    for (const id of ids) if (id >= vocab) throw ApiError.badRequest(`input tensor \`input_ids\`: token id ${id} is out of the vocabulary (size ${vocab})`, 'input_ids');
  }
  if (ids.length === 0) throw ApiError.badRequest('the prompt is empty (it tokenized to no tokens)', 'text_input');
  if (trace !== null) trace.tokenized(ids.length);
  const budget = completionBudget(model, ids.length, req.sampling.maxTokens, 'input');
  const request = generationRequest({
    model,
    promptIds: ids,
    sampling: req.sampling,
    maxTokens: budget,
    requestId: call.engineRequestId,
    signal: call.cancellation,
    route: {},
    arrived: call.arrived,
    skipSpecialTokens: true,
    collectTokenIds: true,
    limit: call.limit,
    trace,
  });
  const sink = new InferResponseSink({ modelName: model.name, id: req.id, outputs: req.outputs, stream: req.stream, decoupled: call.decoupled }, emit);
  await runGeneration(request, sink);
}
