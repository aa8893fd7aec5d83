// What the mock engine's protocol services share: the simulator, counters,
// identity and the load figures both protocols report.

import { create } from '@bufbuild/protobuf';

import { EngineLoadSchema, type EngineLoad } from '../gen/common_pb.js';
import type { StreamStats } from './output-stream.js';
import type { SimCore } from './sim-core.js';
import { ReceivedLog } from './received.js';
import { MockAdapters } from './lora.js';
import { DEFAULT_EMBEDDING_DIM } from './embed.js';
import { faultIn, type EngineRole, type Fault, type FaultContext } from './faults.js';
import type { KvRendezvousServer } from './kv-rendezvous.js';
import { PendingRequests } from './pending.js';

export interface RankLoad {
  running: number;
  waiting: number;
  /** Tokens held in KV blocks by running requests (block granularity). */
  usedTokens: number;
  capacityTokens: number;
  usage: number;
  /** Tokens the running requests attend over. */
  activeTokens: number;
  /** Prompt tokens of waiting requests not yet computed. */
  waitingTokens: number;
  cacheHitRate: number;
}

export class MockContext {
  readonly startedAt = new Date();
  readonly stats: StreamStats = { generates: 0, aborts: 0, abortRpcs: 0, active: 0 };
  paused = false;
  /** Shutting down (engine-server.ts drain): new Generates are refused UNAVAILABLE, HealthCheck fails. */
  draining = false;
  /** Fires when the drain's grace is over: the requests still running end with UNAVAILABLE. */
  readonly shutdown = new AbortController();
  /** GetModelInfo reports max_context_length (false: 0, as an engine that does not say). */
  reportsContextLength = true;
  /** Serve FlushCache / StartProfile / StopProfile (off: the rpcs are unimplemented, as on an engine without them). */
  adminRpcs = true;
  /** The last Generate requests received, for tests that prove delivery. */
  readonly received = new ReceivedLog();
  /** GetModelInfo supports_vision: the model folder's config.json has a vision_config (a real engine reports it for a vision-language model; gateways such as SMG refuse image input to a worker that does not). */
  supportsVision = false;
  /** GetModelInfo default_sampling_params_json (as an engine started with sampling defaults reports them; '' = none). */
  defaultSamplingParamsJson = '';
  /** SGLang's GetModelInfo preferred_sampling_params (its --preferred-sampling-params JSON; '' = none). */
  preferredSamplingParams = '';
  /** Loaded LoRA adapters (SGLang protocol). */
  readonly adapters = new MockAdapters();
  /** Set when faults are enabled (mock/faults.ts): reads a prompt's text to find its trigger. */
  decodePrompt: ((ids: ArrayLike<number>) => string) | null = null;
  protocol: 'sglang' | 'vllm' = 'sglang';
  /** Where the engine listens, once it does. */
  address = '';
  /** The engine's part in disaggregated serving (engine-server.ts MockEngineOptions.role). */
  role: EngineRole = 'aggregated';
  /** Prefill role: the bootstrap / side-channel server its decode workers take KV from. */
  rendezvous: KvRendezvousServer | null = null;
  /** Host the side channel is reached at (vLLM's remote_host). */
  rendezvousHost = '127.0.0.1';
  /** How long a decode leg waits for its KV, and a prefill leg holds it (ms). */
  rendezvousTimeoutMs = 30_000;
  /** Simulated ms per prompt token to move KV from the prefill worker to the decode worker. */
  kvTransferMsPerToken = 0;
  /** vLLM: GetServerInfo kv_connector and kv_engine_id ('' when aggregated). */
  kvConnector = '';
  kvEngineId = '';
  /** Decode legs paying their KV transfer time now. */
  kvTransfersInFlight = 0;
  /** Requests waiting outside the scheduler (PD hand-over), for the Abort rpc. */
  readonly pending = new PendingRequests();

  constructor(
    readonly core: SimCore,
    readonly modelPath: string,
    readonly servedModelName: string,
    private readonly extraArgs: Record<string, string | number | boolean>,
    /** Merge a choice's queued tokens into one message (off: one token per message). */
    readonly coalesce = true,
    /** Tokens per streamed message (the last one of a choice may hold fewer). */
    readonly streamInterval = 1,
    /** Length of the vectors the Embed rpc answers. */
    readonly embeddingDim = DEFAULT_EMBEDDING_DIM,
  ) {}

  /** The fault this prompt asks for (null when faults are off or it asks for none). */
  faultFor(prompt: ArrayLike<number>): Fault | null {
    return this.decodePrompt ? faultIn(this.decodePrompt(prompt), this.role) : null;
  }

  faultContext(requestId: string, promptTokens: number): FaultContext {
    return { protocol: this.protocol, requestId, promptTokens, maxContextLength: this.core.o.maxContextLength, address: this.address };
  }

  healthy(): boolean {
    return !this.paused && !this.draining;
  }

  /** KV capacity of one rank, in tokens. */
  capacityTokens(): number {
    return this.core.o.numBlocks * this.core.o.blockSize;
  }

  rankLoad(id: number): RankLoad {
    const r = this.core.ranks[id]!;
    const pool = r.pool;
    return {
      running: r.sched.running.length,
      waiting: r.sched.waiting.length,
      usedTokens: pool.usedBlocks() * pool.blockSize,
      capacityTokens: pool.numBlocks * pool.blockSize,
      usage: pool.usage(),
      activeTokens: r.sched.activeTokens(),
      waitingTokens: r.sched.waitingTokens(),
      cacheHitRate: pool.lookups ? pool.hits / pool.lookups : 0,
    };
  }

  /** The load record pushed on the KV-event stream for one rank. */
  engineLoad(dpRank: number): EngineLoad {
    const l = this.rankLoad(dpRank);
    return create(EngineLoadSchema, {
      runningRequests: l.running,
      waitingRequests: l.waiting,
      waitingUncachedTokens: l.waitingTokens,
      tokenUsage: l.usage,
      activeTokenUsage: l.activeTokens / l.capacityTokens,
      genThroughput: this.core.throughput() / this.core.ranks.length,
      maxRunningRequests: this.core.o.maxNumSeqs,
      cacheHitRate: l.cacheHitRate,
      numUsedTokens: l.usedTokens,
      maxTotalNumTokens: l.capacityTokens,
    });
  }

  serverArgs(): Record<string, string | number | boolean> {
    const o = this.core.o;
    const t = this.core.timing.o;
    return {
      mode: o.mode,
      step_ms: t.stepMs,
      prefill_ms_per_token: t.prefillMsPerToken,
      speedup_ratio: t.speedupRatio,
      max_running_requests: o.maxNumSeqs,
      max_num_seqs: o.maxNumSeqs,
      max_num_batched_tokens: o.maxNumBatchedTokens,
      chunked_prefill_size: o.chunkedPrefill ? o.maxNumBatchedTokens : -1,
      enable_chunked_prefill: o.chunkedPrefill,
      enable_prefix_caching: o.prefixCaching,
      disable_radix_cache: !o.prefixCaching,
      context_length: o.maxContextLength,
      page_size: o.blockSize,
      block_size: o.blockSize,
      num_gpu_blocks: o.numBlocks,
      max_total_num_tokens: this.capacityTokens(),
      dp_size: o.dataParallelSize,
      data_parallel_size: o.dataParallelSize,
      random_seed: o.seed,
      stream_interval: this.streamInterval,
      embedding_dim: this.embeddingDim,
      // SGLang's names: "null" when not disaggregated; the bootstrap port is the prefill
      // side's (SGLang's default 8998 elsewhere, as its server_args always carry one).
      disaggregation_mode: this.role === 'aggregated' ? 'null' : this.role,
      disaggregation_bootstrap_port: this.rendezvous?.port ?? 8998,
      kv_transfer_ms_per_token: this.kvTransferMsPerToken,
      ...this.extraArgs,
    };
  }
}
