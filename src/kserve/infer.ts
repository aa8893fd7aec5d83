// One inference request on the shared request path: the same checks as the HTTP
// completions endpoint (token ids inside the vocabulary, the context length and token
// budget), then generate() (router, engine, cancellation) and decodeOutputs() (stop
// rules, detokenizer), with the responses made by ./response.ts.

import { ApiError } from '../protocol/errors.js';
import { completionBudget, validateForModel } from '../pipeline/preprocess.js';
import { generate, type Generation } from '../pipeline/generate.js';
import { decodeOutputs, outputRules } from '../pipeline/outputs.js';
import type { ServedModel } from '../pipeline/served-model.js';
import type { Cancellation, EngineEvent } from '../engine/types.js';
import type { ModelInferResponse } from '../gen/kserve/grpc_service_pb.js';
import type { InferRequest } from './request.js';
import { drive, InferResponseSink } from './response.js';

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
}

/** Runs the generation; `emit` gets each response as it is made. Failures throw ApiError. */
export async function runInfer(call: InferCall, emit: (r: ModelInferResponse) => void): Promise<void> {
  const { model, req } = call;
  validateForModel(model, req.sampling, {});
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
  const budget = completionBudget(model, ids.length, req.sampling.maxTokens, 'input');
  const sampling = { ...req.sampling, maxTokens: budget };
  const generated: number[] = [];
  const routed = generate(model, ids, sampling, call.engineRequestId, call.cancellation);
  // Only streamed output_ids need the ids as they arrive (a generator layer costs promise jobs per event).
  const gen = req.stream && req.outputs.includes('output_ids') ? recordIds(routed, generated) : routed;
  const events = decodeOutputs(model, gen, { ...outputRules(sampling, budget), n: 1, skipSpecialTokens: true, collectTokenIds: true, arrived: call.arrived });
  const sink = new InferResponseSink({ modelName: model.name, id: req.id, outputs: req.outputs, stream: req.stream, decoupled: call.decoupled }, emit);
  await drive(events, generated, sink);
}

/** The same generation, with every generated id (choice 0) appended to `into` as it arrives. */
function recordIds(gen: Generation, into: number[]): Generation {
  async function* events(): AsyncGenerator<EngineEvent> {
    for await (const ev of gen.events) {
      if (ev.kind === 'chunk') into.push(...ev.chunk.tokenIds);
      else into.push(...ev.done.outputIds);
      yield ev;
    }
  }
  return {
    get worker() {
      return gen.worker;
    },
    get dispatchedAt() {
      return gen.dispatchedAt;
    },
    get overlapBlocks() {
      return gen.overlapBlocks;
    },
    get dpRank() {
      return gen.dpRank;
    },
    events: events(),
  };
}
