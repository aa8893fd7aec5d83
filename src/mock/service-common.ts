// What the mock engine's two gRPC services (sglang-service.ts, vllm-service.ts) do
// alike: running a Generate on the simulator core, the Embed, HealthCheck, FlushCache
// and SubscribeKvEvents handlers, the model-info and per-rank load fields, and the
// direct (fast-path) routes. Each protocol file keeps only its own request and
// response mapping.

import type { DescMessage, MessageShape } from '@bufbuild/protobuf';
import { Code, ConnectError, type HandlerContext } from '@connectrpc/connect';

import { KvEventBatchSchema, SubscribeKvEventsRequestSchema, type SubscribeKvEventsRequest } from '../gen/common_pb.js';
import { fastRoute, type FastRoute } from './grpc-fast-path.js';
import { embedInput, mockEmbedding } from './embed.js';
import { subscribeKvEvents } from './kv-events-rpc.js';
import { runRequest } from './output-stream.js';
import { SimRequestError, type CoreOutput, type CoreRequest } from './sim-core.js';
import { faultError, untilAborted, type Fault } from './faults.js';
import { finishes, handOverTimeout, orAborted, payloadOf, receiveFailure, receiveKv, type PdPlan } from './pd-leg.js';
import type { MockContext } from './mock-context.js';

/** What a draining engine answers new requests with, and ends the ones its grace did not finish with (UNAVAILABLE). */
export const SHUTTING_DOWN = 'the engine is shutting down';

function shuttingDown(): ConnectError {
  return new ConnectError(SHUTTING_DOWN, Code.Unavailable);
}

/** A simulator error as the rpc status the engines answer with. */
export function toConnect(err: unknown): unknown {
  if (err instanceof SimRequestError) {
    const code = /already running/.test(err.message) ? Code.AlreadyExists : Code.InvalidArgument;
    return new ConnectError(err.message, code);
  }
  return err;
}

/**
 * Runs one request on the core and yields what `emit` makes of each batch of outputs.
 * The request is submitted before the first message, so that a rejected one fails the
 * rpc with its status instead of an empty stream. `pd`: the request is one leg of a
 * disaggregated request (pd-leg.ts): a decode leg takes its prompt's KV first, a prefill
 * leg holds its outputs until its KV is handed over.
 */
export async function* serveGenerate<R>(m: MockContext, req: CoreRequest, ctx: HandlerContext, emit: (batch: CoreOutput[]) => Iterable<R>, pd?: PdPlan): AsyncGenerator<R> {
  if (m.draining) throw shuttingDown();
  // The drain's end stops the request (as a cancel would) and fails the rpc UNAVAILABLE.
  const shutdown = m.shutdown.signal;
  const run = new AbortController();
  const stop = () => run.abort();
  const cut = () => shutdown.aborted && !ctx.signal.aborted;
  const found = m.faultFor(req.prompt);
  const noRendezvous = found?.kind === 'no_rendezvous';
  const fault = noRendezvous ? null : found;
  const prefill = pd?.role === 'prefill' ? pd : undefined;
  // Until the prefill leg has handed its KV over, any end of it fails the hand-over.
  let handedOver = false;
  // Fires on the caller's cancel and, for a PD leg, on an Abort rpc during its waits.
  const own = pd ? m.pending.begin(req.id, ctx.signal) : undefined;
  const signal = own?.signal ?? ctx.signal;
  try {
    ctx.signal.addEventListener('abort', stop, { once: true });
    shutdown.addEventListener('abort', stop, { once: true });
    if (fault && fault.after === 0) await fail(m, fault, req, ctx);
    if (pd?.role === 'decode') {
      m.stats.active++;
      let got: Awaited<ReturnType<typeof receiveKv>>;
      try {
        got = await receiveKv(m, req, pd, signal);
      } finally {
        m.stats.active--;
      }
      if (got.kind === 'cancelled') {
        // A cancelled stream just stops; an Abort rpc ends the choices with "abort".
        if (!ctx.signal.aborted) yield* emit(finishes(req, 'abort'));
        return;
      }
      if (got.kind === 'failed') {
        const end = receiveFailure(pd, req, got.why);
        if ('error' in end) throw end.error;
        yield* emit(end.outputs);
        return;
      }
      req = { ...req, transferredTokens: got.tokens };
    }
    const held: CoreOutput[][] | undefined = prefill ? [] : undefined;
    let stream: AsyncGenerator<CoreOutput[]>;
    let produced = 0;
    try {
      stream = runRequest(m.core, req, run.signal, m.stats, m.coalesce, m.streamInterval);
      const first = await stream.next();
      if (cut()) throw shuttingDown();
      if (first.done) return;
      if (held) held.push(first.value);
      else yield* emit(first.value);
      produced += tokensIn(first.value);
    } catch (err) {
      throw toConnect(err);
    }
    if (fault && produced >= fault.after) {
      await stream.return(undefined);
      await fail(m, fault, req, ctx);
    }
    for await (const batch of stream) {
      if (cut()) break;
      if (held) held.push(batch);
      else yield* emit(batch);
      produced += tokensIn(batch);
      if (fault && produced >= fault.after) {
        await stream.return(undefined);
        await fail(m, fault, req, ctx);
      }
    }
    if (cut()) throw shuttingDown();
    if (!prefill || !held) return;
    if (signal.aborted) {
      if (!ctx.signal.aborted) for (const b of held) yield* emit(b);
      return;
    }
    // The prompt is computed: hold its KV for the decode leg (unless the fault says never).
    if (!noRendezvous) {
      const taken = m.rendezvous!.store.publish(prefill.key, payloadOf(m, req), m.core.holdKv(req.prompt));
      handedOver = true;
      if (prefill.answerAfterTaken && !(await orAborted(taken, signal, false))) {
        if (signal.aborted) {
          m.rendezvous!.store.fail(prefill.key, 'prefill request aborted');
          if (!ctx.signal.aborted) yield* emit(finishes(req, 'abort'));
          return;
        }
        throw handOverTimeout(m, req, prefill.room ?? 0);
      }
    } else handedOver = true;
    for (const b of held) yield* emit(b);
  } finally {
    ctx.signal.removeEventListener('abort', stop);
    shutdown.removeEventListener('abort', stop);
    if (own) m.pending.end(req.id, own);
    if (prefill && !handedOver) m.rendezvous?.store.fail(prefill.key, 'prefill request failed or aborted');
  }
}

function tokensIn(batch: CoreOutput[]): number {
  let n = 0;
  for (const o of batch) if (o.kind === 'tokens') n += o.tokenIds.length;
  return n;
}

/** Ends a Generate with the requested fault (a `hang` waits until the caller gives up, then ends quietly). */
async function fail(m: MockContext, f: Fault, req: CoreRequest, ctx: HandlerContext): Promise<never> {
  if (f.kind === 'hang') {
    await untilAborted(ctx.signal);
    throw new ConnectError('cancelled by the client', Code.Canceled);
  }
  throw faultError(f, m.faultContext(req.id, req.prompt.length));
}

/**
 * The handlers whose messages have the same fields in both protocols. With embedding
 * dimension 0 there is no Embed handler: Connect answers it UNIMPLEMENTED, as an engine
 * built without embeddings does.
 */
export function sharedHandlers(m: MockContext) {
  const { core } = m;
  const embed = (req: { requestId: string; tokenized?: { inputIds: number[] } }) => {
    const fault = req.tokenized ? m.faultFor(req.tokenized.inputIds) : null;
    if (fault && fault.kind !== 'hang' && fault.kind !== 'no_rendezvous') throw faultError(fault, m.faultContext(req.requestId, req.tokenized!.inputIds.length));
    const ids = embedInput(req.requestId, req.tokenized?.inputIds, core.o.maxContextLength, core.o.vocabSize);
    const v = mockEmbedding(ids, m.embeddingDim, core.o.seed);
    return { embedding: Array.from(v), embeddingDim: v.length, promptTokens: ids.length };
  };
  let profiling = false;
  const admin = {
    flushCache() {
      const ok = core.flushCache();
      return { success: ok, message: ok ? 'flushed' : 'blocks in use; not flushed' };
    },
    // Recorded, not run: a mock has no device to profile.
    startProfile() {
      if (profiling) return { success: false, message: 'already profiling' };
      profiling = true;
      return { success: true, message: 'profiling started (mock: recorded only)' };
    },
    stopProfile() {
      if (!profiling) return { success: false, message: 'not profiling' };
      profiling = false;
      return { success: true, message: 'profiling stopped (mock: recorded only)' };
    },
  };
  return {
    ...(m.embeddingDim > 0 ? { embed } : {}),
    healthCheck() {
      return { healthy: m.healthy(), message: m.draining ? SHUTTING_DOWN : m.healthy() ? 'mock engine ok' : 'mock engine paused' };
    },
    ...(m.adminRpcs ? admin : {}),
    subscribeKvEvents: (req: SubscribeKvEventsRequest, ctx: HandlerContext) => subscribeKvEvents(core.hub, req, ctx, (r) => m.engineLoad(r), m.shutdown.signal),
  };
}

/** GetModelInfo's fields common to both protocols. */
export function modelInfoFields(m: MockContext) {
  const { core } = m;
  return {
    modelPath: m.modelPath,
    tokenizerPath: m.modelPath,
    isGeneration: true,
    supportsVision: m.supportsVision,
    servedModelName: m.servedModelName,
    maxContextLength: m.reportsContextLength ? core.o.maxContextLength : 0,
    maxReqInputLen: m.reportsContextLength ? core.o.maxContextLength - 1 : 0,
    vocabSize: core.o.vocabSize,
    eosTokenIds: core.o.eosTokenIds,
    modelType: 'mock',
    architectures: ['PorticoMockEngine'],
    defaultSamplingParamsJson: m.defaultSamplingParamsJson,
  };
}

/** GetLoads' per-rank rows (both protocols' SchedulerLoad), for one rank or all. */
export function rankLoads(m: MockContext, dpRank: number | undefined) {
  const { core } = m;
  const tps = core.throughput();
  return core.ranks
    .filter((r) => dpRank === undefined || r.id === dpRank)
    .map((r) => {
      const l = m.rankLoad(r.id);
      return {
        dpRank: r.id,
        numRunningReqs: l.running,
        numWaitingReqs: l.waiting,
        numTotalReqs: l.running + l.waiting,
        numUsedTokens: l.usedTokens,
        maxTotalNumTokens: l.capacityTokens,
        tokenUsage: l.usage,
        genThroughput: tps / core.ranks.length,
        cacheHitRate: l.cacheHitRate,
        utilization: l.running / core.o.maxNumSeqs,
        maxRunningRequests: core.o.maxNumSeqs,
        numWaitingUncachedTokens: l.waitingTokens,
      };
    });
}

/** The direct routes of a service: its Generate and SubscribeKvEvents streams. */
export function fastRoutes<I extends DescMessage, O extends DescMessage>(
  m: MockContext,
  service: { typeName: string },
  input: I,
  output: O,
  generate: (req: MessageShape<I>, ctx: HandlerContext) => AsyncIterable<MessageShape<O>>,
): FastRoute[] {
  return [
    fastRoute({ path: `/${service.typeName}/Generate`, input, output, handler: generate }),
    fastRoute({
      path: `/${service.typeName}/SubscribeKvEvents`,
      input: SubscribeKvEventsRequestSchema,
      output: KvEventBatchSchema,
      handler: (req, ctx) => subscribeKvEvents(m.core.hub, req, ctx, (r) => m.engineLoad(r), m.shutdown.signal),
    }),
  ];
}
