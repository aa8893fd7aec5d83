// Mock GPU engine: a real gRPC server (HTTP/2 + Connect's gRPC handler) in
// front of the engine simulator, speaking SGLang's scheduler protocol or
// vLLM's engine protocol, with no model behind it.
//
//  echo  streams the prompt's ids back, one per message, with no delays.
//  sim   a vLLM-style scheduler over a paged KV cache with prefix caching,
//        chunked prefill and preemption; pseudo-random tokens (EOS, stop ids,
//        min/max tokens, optional reasoning block) timed by a prefill/decode
//        cost model; KV events over gRPC and optionally ZMQ. `deterministic`:
//        each token a pure function of the ids before it (script.ts).
//
// drain() is a graceful shutdown: new requests refused UNAVAILABLE, a grace
// for the ones in flight, then UNAVAILABLE for the rest.
//
// Module map: sim-core (ranks, step loop) → scheduler → kv-pool; timing;
// token-policy (script); kv-event-hub (sequencing) → kv-events-rpc / zmq-publisher;
// sglang-service / vllm-service (wire mapping) → output-stream (bridge).
// Disaggregated roles: sglang-pd / vllm-pd (which leg a request is) → pd-leg (the
// hand-over) → kv-rendezvous (prefill: held KV, side-channel server) / kv-fetch (decode).

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';

import { connectNodeAdapter } from '@connectrpc/connect-node';

import { MockContext } from './mock-context.js';
import type { StreamStats } from './output-stream.js';
import { sglangRoutes } from './sglang-service.js';
import { SimCore } from './sim-core.js';
import { vllmRoutes } from './vllm-service.js';
import { ZmqKvPublisher, type ZmqLayout } from './zmq-publisher.js';
import type { EngineRole } from './faults.js';
import { KvRendezvousServer, KvRendezvousStore } from './kv-rendezvous.js';
import type { ScriptTokenizer } from './script.js';

/** The mock's HTTP/2 receive windows, per stream and per connection. */
const RECEIVE_WINDOW = 4 << 20;
const CONNECTION_WINDOW = 16 << 20;

export interface MockEngineOptions {
  /** 0 = pick a free port. */
  port: number;
  host?: string;
  mode: 'echo' | 'sim';
  /** Wire protocol. Default 'sglang'. */
  protocol?: 'sglang' | 'vllm';
  eosTokenIds: number[];
  vocabSize: number;
  modelPath?: string;
  servedModelName?: string;
  /** Fixed cost of a decode step (simulated ms). Default: echo 0, sim 20. */
  stepMs?: number;
  /** Prefill cost per new prompt token (simulated ms). Default: echo 0, sim 0.05. */
  prefillMsPerToken?: number;
  /** Prefill attention cost per new token per 1000 context tokens (ms). Default: sim 0.0005. */
  prefillAttnMsPerTokenCtx?: number;
  /** Decode cost per sequence in the batch (ms). Default: sim 0.02. */
  decodeMsPerSeq?: number;
  /** Decode cost per 1000 KV tokens attended (ms). Default: sim 0.002. */
  decodeMsPerKvToken?: number;
  /** Simulated time runs this many times faster than real time. Default 1. */
  speedupRatio?: number;
  /** sim: chance per step of emitting EOS. Default 0.02. */
  eosProbability?: number;
  /** sim: tokens are drawn below this id. Default: lowest EOS id, else vocabSize. */
  regularVocabSize?: number;
  maxContextLength?: number;
  /** GetModelInfo reports max_context_length 0 (unknown); the context still limits requests. */
  hideContextLength?: boolean;
  /** max_num_seqs: running sequences per rank; the rest wait. Default 256. */
  maxRunningRequests?: number;
  /** KV capacity per rank, in tokens (rounded down to blocks). Default 1_000_000. */
  maxTotalTokens?: number;
  /** Tokens per KV block. Default 16. */
  blockSize?: number;
  /** KV blocks per rank; overrides maxTotalTokens. */
  numBlocks?: number;
  /** Token budget of one step. Default 8192. */
  maxNumBatchedTokens?: number;
  /** Default true. */
  chunkedPrefill?: boolean;
  /** Default: sim true, echo false. */
  prefixCaching?: boolean;
  /** Data-parallel ranks, each with its own scheduler and KV pool. Default 1. */
  dataParallelSize?: number;
  /** Mixed into every request's seed. Default 0. */
  seed?: number;
  /** sim: open every choice with a reasoning block of this many tokens between these ids. */
  reasoning?: { startId: number; endId: number; thinkTokens: number };
  /**
   * sim: the token at each position depends only on the token ids before it (prompt and
   * generated so far), EOS included, with nothing seeded per request or worker: a request
   * continued elsewhere as prompt + generated ids produces what one run would
   * (src/mock/script.ts). `seed` and `reasoning` are not used. Default false.
   */
  deterministic?: boolean;
  /** Deterministic mode: the model's tokenizer, to write a script of reasoning, text and tool calls (without it: hashed ids). */
  tokenizer?: ScriptTokenizer;
  /** On drain(): how long in-flight requests may go on before they end with UNAVAILABLE (ms). Default 5000. */
  shutdownGraceMs?: number;
  /** sim: tokens per streamed message, like vLLM's --stream-interval. Default 1. */
  streamInterval?: number;
  /** Length of the vectors the Embed rpc answers; 0: no Embed rpc (UNIMPLEMENTED). Default 256. */
  embeddingDim?: number;
  /** false: leave FlushCache / StartProfile / StopProfile unimplemented (an engine build without them). */
  adminRpcs?: boolean;
  /** Parser names the engine reports (GetServerInfo). */
  reasoningParser?: string;
  toolCallParser?: string;
  /**
   * Fail requests on demand (src/mock/faults.ts): reads each prompt's text with this
   * decoder to find its `[[fault:KIND]]` trigger. Unset: no faults.
   */
  faults?: { decode(ids: ArrayLike<number>): string };
  /** Also publish KV events over ZMQ in vLLM's format. */
  kvEventsZmq?: { endpoint: string; replayEndpoint?: string; topic?: string; layout?: ZmqLayout };
  /**
   * Disaggregated serving (src/mock/pd-leg.ts). 'prefill' computes prompts and hands their KV
   * to decode workers over its bootstrap / side-channel server; 'decode' takes a request's KV
   * from the prefill worker its request names, then decodes. Default 'aggregated' (neither).
   */
  role?: EngineRole;
  /** Prefill: the bootstrap / side-channel server's port (0: a free one; MockEngine.rendezvous.port says which). Default 0. */
  bootstrapPort?: number;
  /** Simulated ms per prompt token to move KV from prefill to decode (divided by speedupRatio). Default: sim 0.02, echo 0. */
  kvTransferMsPerToken?: number;
  /** vLLM: the KV connector GetServerInfo names for a prefill or decode role. Default "NixlConnector". */
  kvConnector?: string;
  /** How long a decode leg waits for its KV, and a prefill leg holds KV nobody took (ms). Default 30000. */
  rendezvousTimeoutMs?: number;
  /** Prefill (vLLM): the host its returned remote_host names. Default: `host`, or this machine's name when bound to all addresses. */
  advertiseHost?: string;
}

export type MockEngineStats = StreamStats;

export interface MockEngine {
  port: number;
  /** grpc://host:port, or vllm+grpc://host:port for the vLLM protocol. */
  url: string;
  stats: MockEngineStats;
  core: SimCore;
  /** Health reports false while paused (requests still run). */
  context: MockContext;
  /** Bound ZMQ endpoints when kvEventsZmq was given. */
  zmq?: { endpoint: string; replayEndpoint: string; publisher: ZmqKvPublisher };
  /** Prefill role: its bootstrap / side-channel server (SGLang's bootstrap port, vLLM's remote_port) and what it holds. */
  rendezvous?: { port: number; store: KvRendezvousStore };
  /**
   * Shut down gracefully: new Generates are answered UNAVAILABLE ("the engine is shutting
   * down") and HealthCheck reports not serving; the requests in flight get `graceMs`
   * (default: shutdownGraceMs) to finish; those still running then end with UNAVAILABLE.
   * Resolves, with how many were ended so, once their statuses are sent and the connections
   * closed. close() afterwards frees the rest.
   */
  drain(graceMs?: number): Promise<number>;
  close(): Promise<void>;
}

export function createSimCore(opts: MockEngineOptions): SimCore {
  const sim = opts.mode === 'sim';
  const blockSize = opts.blockSize ?? 16;
  return new SimCore({
    mode: opts.mode,
    eosTokenIds: opts.eosTokenIds,
    vocabSize: opts.vocabSize,
    regularVocabSize: opts.regularVocabSize,
    eosProbability: opts.eosProbability ?? 0.02,
    maxContextLength: opts.maxContextLength ?? 32768,
    dataParallelSize: Math.max(1, opts.dataParallelSize ?? 1),
    blockSize,
    numBlocks: opts.numBlocks ?? Math.max(1, Math.floor((opts.maxTotalTokens ?? 1_000_000) / blockSize)),
    maxNumSeqs: Math.max(1, opts.maxRunningRequests ?? 256),
    maxNumBatchedTokens: Math.max(1, opts.maxNumBatchedTokens ?? 8192),
    chunkedPrefill: opts.chunkedPrefill ?? true,
    prefixCaching: opts.prefixCaching ?? sim,
    timing: {
      stepMs: opts.stepMs ?? (sim ? 20 : 0),
      prefillMsPerToken: opts.prefillMsPerToken ?? (sim ? 0.05 : 0),
      prefillAttnMsPerTokenCtx: opts.prefillAttnMsPerTokenCtx ?? (sim ? 0.0005 : 0),
      decodeMsPerSeq: opts.decodeMsPerSeq ?? (sim ? 0.02 : 0),
      decodeMsPerKvToken: opts.decodeMsPerKvToken ?? (sim ? 0.002 : 0),
      speedupRatio: opts.speedupRatio ?? 1,
    },
    seed: opts.seed ?? 0,
    reasoning: opts.reasoning,
    deterministic: opts.deterministic ? { tokenizer: opts.tokenizer } : undefined,
  });
}

/** Whether the model folder's config.json describes a vision tower (false when there is no readable config.json). */
function hasVisionConfig(modelPath: string): boolean {
  try {
    const cfg = JSON.parse(readFileSync(`${modelPath}/config.json`, 'utf8')) as Record<string, unknown>;
    return typeof cfg['vision_config'] === 'object' && cfg['vision_config'] !== null;
  } catch {
    return false;
  }
}

export async function startMockEngine(opts: MockEngineOptions): Promise<MockEngine> {
  const host = opts.host ?? '127.0.0.1';
  const protocol = opts.protocol ?? 'sglang';
  const core = createSimCore(opts);
  const modelPath = opts.modelPath ?? 'portico/mock-model';
  const extra: Record<string, string | number | boolean> = {};
  if (opts.reasoningParser) extra['reasoning_parser'] = opts.reasoningParser;
  if (opts.toolCallParser) extra['tool_call_parser'] = opts.toolCallParser;
  const context = new MockContext(core, modelPath, opts.servedModelName ?? modelPath, extra, opts.mode === 'sim', Math.max(1, opts.streamInterval ?? 1), opts.embeddingDim);
  context.reportsContextLength = !opts.hideContextLength;
  context.adminRpcs = opts.adminRpcs ?? true;
  context.supportsVision = hasVisionConfig(modelPath);

  let zmqPub: ZmqKvPublisher | undefined;
  if (opts.kvEventsZmq) {
    zmqPub = new ZmqKvPublisher(core.hub, opts.kvEventsZmq);
    await zmqPub.start();
  }

  context.protocol = protocol;
  if (opts.faults) context.decodePrompt = opts.faults.decode;
  const role = opts.role ?? 'aggregated';
  context.role = role;
  context.rendezvousTimeoutMs = opts.rendezvousTimeoutMs ?? 30_000;
  context.kvTransferMsPerToken = opts.kvTransferMsPerToken ?? (opts.mode === 'sim' ? 0.02 : 0);
  if (role !== 'aggregated') {
    context.kvConnector = opts.kvConnector ?? 'NixlConnector';
    context.kvEngineId = randomUUID();
  }
  let rendezvous: KvRendezvousServer | undefined;
  if (role === 'prefill') {
    rendezvous = new KvRendezvousServer(new KvRendezvousStore(context.rendezvousTimeoutMs));
    try {
      await rendezvous.listen(opts.bootstrapPort ?? 0, host);
    } catch (err) {
      core.close();
      zmqPub?.close();
      throw err;
    }
    context.rendezvous = rendezvous;
    context.rendezvousHost = opts.advertiseHost ?? (host === '0.0.0.0' || host === '::' ? hostname() : host);
  }
  const { routes, fast } = protocol === 'vllm' ? vllmRoutes(context) : sglangRoutes(context);
  const connect = connectNodeAdapter({ routes });
  const direct = new Map(fast.map((f) => [f.path, f]));
  // Receive windows of the size gRPC servers grow theirs to (BDP probing in grpc-core and
  // grpc-go): a request carrying an image's tensors (megabytes) is taken in a few round
  // trips, not one per 64 KiB.
  const server = http2.createServer({ settings: { initialWindowSize: RECEIVE_WINDOW } }, (req, res) => {
    const f = req.method === 'POST' ? direct.get(req.url) : undefined;
    if (f && String(req.headers['content-type']).startsWith('application/grpc')) f.handle(req, res);
    else connect(req, res);
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.setLocalWindowSize(CONNECTION_WINDOW);
    s.on('close', () => sessions.delete(s));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    core.close();
    zmqPub?.close();
    await rendezvous?.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  context.address = `${urlHost}:${port}`;

  const drain = async (graceMs = opts.shutdownGraceMs ?? 5000): Promise<number> => {
    context.draining = true;
    const end = Date.now() + graceMs;
    while (context.stats.active > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    const ended = context.stats.active;
    context.shutdown.abort();
    // GOAWAY: each connection closes once its open streams sent their status.
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sessions) s.close();
      // A peer that never lets its streams end does not hold the shutdown.
      setTimeout(() => {
        for (const s of sessions) s.destroy();
      }, 2000).unref();
    });
    return ended;
  };

  return {
    port,
    drain,
    url: `${protocol === 'vllm' ? 'vllm+grpc' : 'grpc'}://${urlHost}:${port}`,
    stats: context.stats,
    core,
    context,
    zmq: zmqPub ? { endpoint: zmqPub.endpoint, replayEndpoint: zmqPub.replayEndpoint, publisher: zmqPub } : undefined,
    rendezvous: rendezvous ? { port: rendezvous.port, store: rendezvous.store } : undefined,
    close: () =>
      new Promise<void>((resolve) => {
        core.close();
        zmqPub?.close();
        const side = rendezvous?.close() ?? Promise.resolve();
        server.close(() => void side.then(() => resolve()));
        for (const s of sessions) s.destroy();
      }),
  };
}
