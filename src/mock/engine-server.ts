// Mock GPU engine: a real gRPC server speaking the SGLang scheduler protocol
// (HTTP/2 + Connect's gRPC handler), with no model behind it.
//
//  echo  streams the prompt's ids back, one per message.
//  sim   deterministic pseudo-random tokens with a prefill/decode timing
//        model, EOS, stop ids, min/max tokens and a toy prefix cache.
//
// Wire behaviour mirrors a real worker where Portico depends on it: in stream
// mode the final chunk is followed by a GenerateComplete whose output_ids
// repeat that chunk's ids; with stream=false only GenerateCompletes are sent,
// carrying every output id. An Abort rpc ends the request with
// finish_reason "abort"; a cancelled stream just stops.
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

import { create, type JsonObject } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';

import {
  AbortResponseSchema,
  AggregateMetricsSchema,
  GenerateResponseSchema,
  GetLoadsResponseSchema,
  GetModelInfoResponseSchema,
  GetServerInfoResponseSchema,
  HealthCheckResponseSchema,
  SchedulerLoadSchema,
  SglangScheduler,
  type GenerateRequest,
  type GenerateResponse,
} from '../gen/sglang_scheduler_pb.js';
import { ChoiceGenerator, hashString, PrefixCache } from './token-policy.js';

export interface MockEngineOptions {
  /** 0 = pick a free port. */
  port: number;
  host?: string;
  mode: 'echo' | 'sim';
  eosTokenIds: number[];
  vocabSize: number;
  modelPath?: string;
  servedModelName?: string;
  /** Delay between decode steps. Default: echo 0, sim 20. */
  stepMs?: number;
  /** Prefill delay per uncached prompt token. Default: echo 0, sim 0.05. */
  prefillMsPerToken?: number;
  /** sim: chance per step of emitting EOS. Default 0.02. */
  eosProbability?: number;
  /** sim: tokens are drawn below this id. Default: lowest EOS id, else vocabSize. */
  regularVocabSize?: number;
  maxContextLength?: number;
  /** Requests beyond this wait in queue (GetLoads reports them). Default 256. */
  maxRunningRequests?: number;
  /** KV capacity reported by GetLoads. Default 1_000_000. */
  maxTotalTokens?: number;
}

export interface MockEngineStats {
  /** Generate calls received. */
  generates: number;
  /** Requests stopped early by an Abort rpc or by the client cancelling. */
  aborts: number;
  /** Requests in flight (running or waiting). */
  active: number;
}

export interface MockEngine {
  port: number;
  /** grpc://host:port */
  url: string;
  stats: MockEngineStats;
  close(): Promise<void>;
}

type Job = {
  id: string;
  state: 'waiting' | 'running';
  tokens: number;
  stop: AbortController;
  abortedBy?: 'rpc' | 'cancel';
};

export async function startMockEngine(opts: MockEngineOptions): Promise<MockEngine> {
  const host = opts.host ?? '127.0.0.1';
  const sim = opts.mode === 'sim';
  const stepMs = opts.stepMs ?? (sim ? 20 : 0);
  const prefillMsPerToken = opts.prefillMsPerToken ?? (sim ? 0.05 : 0);
  const eosProbability = opts.eosProbability ?? 0.02;
  const maxContext = opts.maxContextLength ?? 32768;
  const maxRunning = Math.max(1, opts.maxRunningRequests ?? 256);
  const maxTotalTokens = opts.maxTotalTokens ?? 1_000_000;
  const lowestEos = opts.eosTokenIds.length ? Math.min(...opts.eosTokenIds) : opts.vocabSize;
  const drawBound = Math.max(1, Math.min(opts.regularVocabSize ?? (lowestEos > 0 ? lowestEos : opts.vocabSize), opts.vocabSize));
  const modelPath = opts.modelPath ?? 'portico/mock-model';
  const startedAt = new Date();

  const stats: MockEngineStats = { generates: 0, aborts: 0, active: 0 };
  const jobs = new Map<string, Job>();
  const queue: Array<() => void> = [];
  const cache = new PrefixCache();
  let running = 0;
  let lookups = 0;
  let hits = 0;
  // Tokens emitted per whole second, for gen_throughput.
  let tpsSecond = 0;
  let tpsCount = 0;
  let tpsLast = 0;

  const countTokens = (k: number) => {
    const s = Math.floor(Date.now() / 1000);
    if (s !== tpsSecond) {
      tpsLast = s === tpsSecond + 1 ? tpsCount : 0;
      tpsSecond = s;
      tpsCount = 0;
    }
    tpsCount += k;
  };

  const markAborted = (job: Job, by: 'rpc' | 'cancel') => {
    if (job.abortedBy) return;
    job.abortedBy = by;
    stats.aborts++;
    job.stop.abort();
  };

  // Running slot, FIFO; resolves false if the job was aborted while queued.
  const admit = (job: Job): Promise<boolean> => {
    if (running < maxRunning) {
      running++;
      job.state = 'running';
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const go = () => {
        job.stop.signal.removeEventListener('abort', drop);
        running++;
        job.state = 'running';
        resolve(true);
      };
      const drop = () => {
        const i = queue.indexOf(go);
        if (i >= 0) queue.splice(i, 1);
        resolve(false);
      };
      queue.push(go);
      job.stop.signal.addEventListener('abort', drop, { once: true });
    });
  };
  const release = (job: Job) => {
    if (job.state !== 'running') return;
    job.state = 'waiting';
    running--;
    const next = queue.shift();
    if (next) next();
  };

  async function* generate(req: GenerateRequest, ctx: HandlerContext): AsyncGenerator<GenerateResponse> {
    stats.generates++;
    const id = req.requestId;
    if (!id) throw new ConnectError('request_id is required', Code.InvalidArgument);
    if (!req.tokenized) throw new ConnectError('tokenized input is required', Code.InvalidArgument);
    if (jobs.has(id)) throw new ConnectError(`request ${id} is already running`, Code.AlreadyExists);
    const prompt = req.tokenized.inputIds;
    if (prompt.length >= maxContext) {
      throw new ConnectError(`prompt of ${prompt.length} tokens exceeds the context of ${maxContext}`, Code.InvalidArgument);
    }
    const sp = req.samplingParams;
    const n = Math.max(1, sp?.n ?? 1);
    const room = maxContext - prompt.length;
    const limit = sp?.maxNewTokens !== undefined ? Math.min(sp.maxNewTokens, room) : sim ? room : prompt.length;

    const job: Job = { id, state: 'waiting', tokens: prompt.length, stop: new AbortController() };
    jobs.set(id, job);
    stats.active++;
    const onCancel = () => markAborted(job, 'cancel');
    ctx.signal.addEventListener('abort', onCancel, { once: true });
    const stopped = job.stop.signal;

    try {
      if (!(await admit(job))) return yield* abortTail(job, req, [], prompt.length, 0);

      const cached = sim ? cache.lookupAndInsert(prompt) : 0;
      lookups += prompt.length;
      hits += cached;
      if (!(await sleep(prefillMsPerToken * (prompt.length - cached), stopped))) {
        return yield* abortTail(job, req, [], prompt.length, cached);
      }

      const stopIds = new Set(sp?.stopTokenIds ?? []);
      const choices = Array.from({ length: n }, (_, index) => new ChoiceGenerator({
        mode: opts.mode,
        prompt,
        maxNewTokens: limit,
        minNewTokens: sp?.minNewTokens ?? 0,
        stopTokenIds: stopIds,
        eosTokenIds: opts.eosTokenIds,
        ignoreEos: sp?.ignoreEos ?? false,
        drawBound,
        eosProbability,
        seed: (hashString(id) + index * 0x9e3779b9) >>> 0,
      }));
      const usage = (c: ChoiceGenerator) => ({
        promptTokens: prompt.length,
        completionTokens: c.output.length,
        cachedTokens: cached,
      });
      const complete = (c: ChoiceGenerator, index: number, outputIds: number[]) =>
        create(GenerateResponseSchema, {
          requestId: id,
          response: {
            case: 'complete',
            value: {
              outputIds,
              finishReason: c.finish!.reason,
              ...usage(c),
              index,
              matchedStop: c.finish!.matchedTokenId !== undefined
                ? { case: 'matchedTokenId', value: c.finish!.matchedTokenId }
                : { case: undefined },
            },
          },
        });

      // Choices that had nothing to generate (max_new_tokens 0, empty echo).
      for (let i = 0; i < n; i++) if (choices[i]!.finish) yield complete(choices[i]!, i, []);

      let first = true;
      while (choices.some((c) => !c.finish)) {
        if (!first && !(await sleep(stepMs, stopped))) break;
        first = false;
        if (stopped.aborted) break;
        for (let i = 0; i < n; i++) {
          const c = choices[i]!;
          if (c.finish) continue;
          const tok = c.step();
          job.tokens++;
          countTokens(1);
          if (req.stream) {
            yield create(GenerateResponseSchema, {
              requestId: id,
              response: { case: 'chunk', value: { tokenIds: [tok], ...usage(c), index: i } },
            });
          }
          if (c.finish) yield complete(c, i, req.stream ? [tok] : c.output);
        }
      }
      if (stopped.aborted) {
        const open = choices.map((c, i) => (c.finish ? -1 : i)).filter((i) => i >= 0);
        yield* abortTail(job, req, open.map((i) => choices[i]!.output), prompt.length, cached, open);
      }
    } finally {
      ctx.signal.removeEventListener('abort', onCancel);
      release(job);
      jobs.delete(id);
      stats.active--;
    }
  }

  // After an Abort rpc, tell the caller how each open choice ended. After a
  // client cancel there is nobody to tell.
  function* abortTail(
    job: Job, req: GenerateRequest, outputs: number[][], promptTokens: number, cached: number, indexes?: number[],
  ): Generator<GenerateResponse> {
    if (job.abortedBy !== 'rpc') return;
    const n = Math.max(1, req.samplingParams?.n ?? 1);
    const idx = indexes ?? Array.from({ length: n }, (_, i) => i);
    for (let k = 0; k < idx.length; k++) {
      const out = outputs[k] ?? [];
      yield create(GenerateResponseSchema, {
        requestId: job.id,
        response: {
          case: 'complete',
          value: {
            outputIds: req.stream ? [] : out,
            finishReason: 'abort',
            promptTokens,
            completionTokens: out.length,
            cachedTokens: cached,
            index: idx[k]!,
          },
        },
      });
    }
  }

  const routes = (router: ConnectRouter) => {
    router.service(SglangScheduler, {
      generate,
      async abort(req) {
        const job = jobs.get(req.requestId);
        if (!job) return create(AbortResponseSchema, { success: false, message: `no request ${req.requestId}` });
        markAborted(job, 'rpc');
        return create(AbortResponseSchema, { success: true });
      },
      async healthCheck() {
        return create(HealthCheckResponseSchema, { healthy: true, message: 'mock engine ok' });
      },
      async getModelInfo() {
        return create(GetModelInfoResponseSchema, {
          modelPath,
          tokenizerPath: modelPath,
          isGeneration: true,
          servedModelName: opts.servedModelName ?? modelPath,
          maxContextLength: maxContext,
          maxReqInputLen: maxContext - 1,
          vocabSize: opts.vocabSize,
          eosTokenIds: opts.eosTokenIds,
          modelType: 'mock',
          architectures: ['PorticoMockEngine'],
          weightVersion: 'default',
        });
      },
      async getServerInfo() {
        const serverArgs: JsonObject = {
          mode: opts.mode,
          step_ms: stepMs,
          prefill_ms_per_token: prefillMsPerToken,
          max_running_requests: maxRunning,
          context_length: maxContext,
        };
        return create(GetServerInfoResponseSchema, {
          serverArgs,
          schedulerInfo: {},
          activeRequests: jobs.size,
          uptimeSeconds: (Date.now() - startedAt.getTime()) / 1000,
          sglangVersion: 'portico-mock',
          serverType: 'grpc',
          startTime: timestampFromDate(startedAt),
          maxTotalNumTokens: maxTotalTokens,
        });
      },
      async getLoads() {
        let used = 0;
        for (const j of jobs.values()) if (j.state === 'running') used += j.tokens;
        const waiting = jobs.size - running;
        countTokens(0);
        const usage = Math.min(1, used / maxTotalTokens);
        const load = create(SchedulerLoadSchema, {
          dpRank: 0,
          numRunningReqs: running,
          numWaitingReqs: waiting,
          numTotalReqs: jobs.size,
          numUsedTokens: used,
          maxTotalNumTokens: maxTotalTokens,
          tokenUsage: usage,
          genThroughput: tpsLast,
          cacheHitRate: lookups ? hits / lookups : 0,
          utilization: running / maxRunning,
          maxRunningRequests: maxRunning,
        });
        return create(GetLoadsResponseSchema, {
          timestamp: new Date().toISOString(),
          version: 'portico-mock',
          dpRankCount: 1,
          loads: [load],
          aggregate: create(AggregateMetricsSchema, {
            totalRunningReqs: running,
            totalWaitingReqs: waiting,
            totalReqs: jobs.size,
            avgTokenUsage: usage,
            avgThroughput: tpsLast,
            avgUtilization: running / maxRunning,
          }),
        });
      },
    });
  };

  const server = http2.createServer(connectNodeAdapter({ routes }));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    port,
    url: `grpc://${urlHost}:${port}`,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        for (const job of jobs.values()) job.stop.abort();
        server.close(() => resolve());
        for (const s of sessions) s.destroy();
      }),
  };
}

/** Abortable delay; resolves false if `signal` fired. 0 ms still yields to I/O. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      if (timer) clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
      signal.removeEventListener('abort', onAbort);
      resolve(ok);
    };
    const onAbort = () => done(false);
    const timer = ms > 0 ? setTimeout(() => done(true), ms) : undefined;
    const immediate = ms > 0 ? undefined : setImmediate(() => done(true));
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
