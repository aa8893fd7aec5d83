// The portico command line: `serve` and `mock-engine`.

import { isIP } from 'node:net';
import type { ImageSettings } from '../pipeline/image-store.js';
import { DEFAULT_MEDIA_FETCH } from '../pipeline/media-fetch.js';
import { tracingSettings, TracingSettingsError, type TracingSettings } from '../tracing/settings.js';
import { parseArgs } from 'node:util';
import { MAIN_HELP, MOCK_ENGINE_HELP } from './help.js';
import { helpText, resolveOptions, UsageError } from './options.js';
import { configureLog, log, type Level } from '../log.js';
import { SERVE_INTRO, SERVE_OPTIONS, SERVE_USAGE } from './serve-options.js';
import { BENCH_INTRO, BENCH_OPTIONS, BENCH_USAGE } from './bench-options.js';
import { benchMain } from './bench.js';
import { serve } from '../app/serve.js';
import { runMockEngine } from './mock-engine.js';
import { registerCommand } from './register.js';
import { precommitPeekMs, readProcessorOptions } from './processor-options.js';
import { modelFlags } from './model-flags.js';
import { frontendConfig } from './frontend-config.js';
import { parseLimits, type LimitsConfig } from '../limits/limits-config.js';
import type { RouterMode, RouterOptions } from '../router/options.js';
import type { QueuePolicy } from '../router/queue.js';
import { defaultShards } from './default-shards.js';


function metricsPrefix(v: string): string {
  if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(v)) throw new UsageError(`--metrics-prefix must match [a-zA-Z_:][a-zA-Z0-9_:]* (the start of a Prometheus metric name), got '${v}'`);
  return v;
}

/** The `rate-limits` of resolved serve options; a bad value is a usage error. */
export function rateLimitsOf(v: Record<string, unknown>): LimitsConfig {
  try {
    return parseLimits(v['rate-limits'] as Record<string, unknown>[], v['rate-limit-window-secs'] as number);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function int(flag: string, v: string | undefined, dflt: number, min = 0): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${flag} must be an integer >= ${min}, got '${v}'`);
  return n;
}

function num(flag: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`--${flag} must be a non-negative number, got '${v}'`);
  return n;
}

function mode(flag: string, v: string | undefined): 'echo' | 'sim' | undefined {
  if (v === undefined || v === 'echo' || v === 'sim') return v;
  throw new UsageError(`--${flag} must be 'echo' or 'sim', got '${v}'`);
}

async function serveCommand(args: string[]): Promise<void> {
  const { values: v, help } = resolveOptions(SERVE_OPTIONS, args);
  if (help) {
    process.stdout.write(helpText(SERVE_USAGE, SERVE_INTRO, SERVE_OPTIONS));
    return;
  }
  configureLog({ level: v['log-level'] as Level, format: v['log-format'] as 'json' | 'text' });
  const processor = await readProcessorOptions(v);
  const shards = (v.shards as number | undefined) ?? defaultShards();
  const peekMs = precommitPeekMs(v);
  const running = await serve({
    ...processor,
    frontendConfig: frontendConfig(SERVE_OPTIONS, v, { 'chat-processor': processor.chatProcessor, shards, 'stream-precommit-peek-ms': peekMs }),
    chatTemplate: v['chat-template'] as string | undefined,
    ...modelFlags(v),
    host: v.host as string,
    httpPort: v['http-port'] as number,
    grpcPort: v['grpc-port'] as number | undefined,
    mock: v.mock as 'echo' | 'sim' | undefined,
    mockWorkers: v['mock-workers'] as number,
    discovery: v.discovery as string | undefined,
    namespace: v.namespace as string,
    eventPlane: v['event-plane'] as string | undefined,
    replicaSync: !v['no-replica-sync'],
    replicaSyncExpirySecs: v['replica-sync-expiry-secs'] as number,
    maxBodyBytes: v['max-body-bytes'] as number,
    maxPromptTokens: v['max-prompt-tokens'] as number,
    maxConcurrentRequests: v['max-concurrent-requests'] as number,
    rateLimits: rateLimitsOf(v),
    apiKey: (v['api-key'] as string[]).length > 0 ? (v['api-key'] as string[]) : undefined,
    adminApiKey: v['admin-api-key'] as string | undefined,
    metricsApiKey: v['metrics-api-key'] as string | undefined,
    shutdownTimeoutSecs: v['shutdown-timeout-secs'] as number,
    metricsPrefix: metricsPrefix(v['metrics-prefix'] as string),
    logRequests: v['log-requests'] as boolean | undefined,
    corsOrigins: v['cors-allow-origins'] as string[],
    requestTimeoutSecs: v['request-timeout-secs'] as number,
    toolCallParser: v['tool-call-parser'] as string | undefined,
    reasoningParser: v['reasoning-parser'] as string | undefined,
    router: routerOptions(v),
    migration: { limit: v['migration-limit'] as number, maxSeqLen: v['migration-max-seq-len'] as number },
    disagg: { enforce: Boolean(v['disagg-enforce']), bootstrapPort: v['disagg-bootstrap-port'] as number, rendezvousTimeoutSecs: v['disagg-rendezvous-timeout-secs'] as number },
    faults: {
      firstResponseTimeoutSecs: v['engine-first-response-timeout-secs'] as number,
      healthCheckIntervalSecs: v['health-check-interval-secs'] as number,
      breakerFailures: v['worker-breaker-failures'] as number,
      breakerFailureRate: v['worker-breaker-failure-rate'] as number,
      precommitPeekMs: peekMs,
      keepAliveSecs: v['stream-keep-alive-secs'] as number,
      stallTimeoutSecs: v['stream-stall-timeout-secs'] as number,
      writeIntervalMs: v['stream-write-interval-ms'] as number,
    },
    shards,
    responsesStore: { url: v['responses-store'] as string, ttlSecs: v['responses-store-ttl-secs'] as number, maxRows: v['responses-store-max-rows'] as number },
    log: { level: v['log-level'] as Level, format: v['log-format'] as 'json' | 'text' },
    tracing: tracingOptions(v),
    images: imageSettings(v),
  });
  log.info(`portico listening on http://${v.host as string}:${running.port}`, { port: running.port });
  if (running.grpcPort !== undefined) log.info(`portico KServe gRPC listening on ${v.host as string}:${running.grpcPort} (inference.GRPCInferenceService)`, { grpc_port: running.grpcPort });
  else log.info('KServe gRPC endpoint off; serve it with --grpc-port P (PORTICO_GRPC_PORT, config key "grpc-port")');
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    log.info('draining in-flight requests before exit');
    void running.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // SIGHUP: read the rate limits again (flags, environment, --config file, as at start); a
  // bad file keeps the limits in force. Other options need a restart.
  process.on('SIGHUP', () => {
    void (async () => {
      try {
        const config = rateLimitsOf(resolveOptions(SERVE_OPTIONS, args).values);
        await running.reloadRateLimits?.(config);
        log.info('rate limits reloaded', { keys: config.entries.filter((e) => e.key !== '*').length, default: config.entries.some((e) => e.key === '*'), window_secs: config.windowMs / 1000 });
      } catch (err) {
        log.error('rate limits not reloaded; the ones in force stay', { error: (err as Error).message });
      }
    })();
  });
}

/** The image flags (group Images) as the image store's settings. */
function imageSettings(v: Record<string, unknown>): ImageSettings {
  const domains = v['allowed-media-domains'] as string[];
  let limit: unknown;
  try {
    limit = JSON.parse(v['limit-mm-per-prompt'] as string);
  } catch {
    limit = null;
  }
  const perRequest = (limit as { image?: unknown } | null)?.image;
  if (limit === null || typeof limit !== 'object' || Array.isArray(limit) || !Number.isInteger(perRequest) || (perRequest as number) < 0) {
    throw new UsageError('--limit-mm-per-prompt must be a JSON object like {"image": 4}');
  }
  const addresses = v['allowed-media-addresses'] as string[];
  for (const a of addresses) {
    const [addr, bits] = a.split('/');
    if (isIP(addr ?? '') === 0 || (bits !== undefined && !/^\d+$/.test(bits))) throw new UsageError(`--allowed-media-addresses: not an address or CIDR: ${a}`);
  }
  return {
    fetch: {
      remote: domains.length > 0,
      allowedDomains: domains.includes('*') ? [] : domains,
      allowedAddresses: addresses,
      maxBytes: v['max-image-bytes'] as number,
      timeoutMs: (v['media-fetch-timeout-secs'] as number) * 1000,
      maxRedirects: DEFAULT_MEDIA_FETCH.maxRedirects,
    },
    maxPixels: v['max-image-pixels'] as number,
    maxPerRequest: perRequest as number,
    cacheBytes: Math.round((v['mm-processor-cache-gb'] as number) * 2 ** 30),
  };
}

function routerOptions(v: Record<string, unknown>): Partial<RouterOptions> {
  const opt = (k: string) => v[k] as number | undefined;
  return {
    mode: v['router-mode'] as RouterMode,
    blockSize: v['router-block-size'] as number,
    temperature: v['router-temperature'] as number,
    prefillWeight: v['router-prefill-weight'] as number,
    kvEvents: !v['router-no-kv-events'],
    predictedTtlSecs: v['router-ttl-secs'] as number,
    trackOutputBlocks: Boolean(v['router-track-output-blocks']),
    sessionAffinityTtlSecs: v['router-session-affinity-ttl-secs'] as number,
    queueThreshold: opt('router-queue-threshold'),
    maxBatchedTokens: v['router-max-num-batched-tokens'] as number,
    activeDecodeBlocksThreshold: opt('active-decode-blocks-threshold'),
    activePrefillTokensThreshold: opt('active-prefill-tokens-threshold'),
    queuePolicy: v['router-queue-policy'] as QueuePolicy,
    queueMaxSize: v['router-queue-max-size'] as number,
    queueTimeoutSecs: v['router-queue-timeout-secs'] as number,
    queueRejectStatus: v['router-queue-reject-status'] as number,
    retryAfterSecs: v['router-queue-retry-after-secs'] as number,
    priorityShiftMs: v['router-priority-shift-ms'] as number,
  };
}

function oneOf<T extends string>(flag: string, v: string | undefined, allowed: readonly T[]): T | undefined {
  if (v === undefined) return undefined;
  if ((allowed as readonly string[]).includes(v)) return v as T;
  throw new UsageError(`--${flag} must be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got '${v}'`);
}

async function mockEngineCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'model-path': { type: 'string' },
      mode: { type: 'string' },
      'step-ms': { type: 'string' },
      'prefill-ms-per-token': { type: 'string' },
      protocol: { type: 'string' },
      'speedup-ratio': { type: 'string' },
      'data-parallel-size': { type: 'string' },
      'block-size': { type: 'string' },
      'num-blocks': { type: 'string' },
      'max-num-seqs': { type: 'string' },
      'max-num-batched-tokens': { type: 'string' },
      'max-model-len': { type: 'string' },
      'hide-context-length': { type: 'boolean' },
      'no-chunked-prefill': { type: 'boolean' },
      'no-prefix-caching': { type: 'boolean' },
      'decode-ms-per-seq': { type: 'string' },
      'decode-ms-per-kv-token': { type: 'string' },
      'eos-probability': { type: 'string' },
      seed: { type: 'string' },
      'stream-interval': { type: 'string' },
      'embedding-dim': { type: 'string' },
      faults: { type: 'boolean' },
      deterministic: { type: 'boolean' },
      'shutdown-grace-secs': { type: 'string' },
      'reasoning-tokens': { type: 'string' },
      'reasoning-parser': { type: 'string' },
      'tool-call-parser': { type: 'string' },
      'kv-events-zmq': { type: 'string' },
      'kv-events-replay': { type: 'string' },
      'kv-events-topic': { type: 'string' },
      'kv-events-format': { type: 'string' },
      register: { type: 'string' },
      'event-plane': { type: 'string' },
      'model-name': { type: 'string' },
      namespace: { type: 'string' },
      'lease-ttl-secs': { type: 'string' },
      'advertise-host': { type: 'string' },
      role: { type: 'string' },
      'bootstrap-port': { type: 'string' },
      'kv-transfer-ms-per-token': { type: 'string' },
      'kv-connector': { type: 'string' },
      'rendezvous-timeout-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(MOCK_ENGINE_HELP);
    return;
  }
  if (!values['model-path']) throw new UsageError('--model-path is required');
  if ((values['model-name'] || values.namespace) && !values.register && !values['event-plane']) {
    throw new UsageError('--model-name and --namespace need --register or --event-plane');
  }
  if (values['advertise-host'] && !values.register && !values['event-plane'] && values.role !== 'prefill') {
    throw new UsageError('--advertise-host needs --register, --event-plane or --role prefill');
  }
  if (values['lease-ttl-secs'] && !values.register) throw new UsageError('--lease-ttl-secs needs --register');
  const opt = (flag: string, v: string | undefined, min = 0) => (v === undefined ? undefined : int(flag, v, 0, min));
  const optNum = (flag: string, v: string | undefined) => (v === undefined ? undefined : num(flag, v, 0));
  const speedup = optNum('speedup-ratio', values['speedup-ratio']);
  if (speedup !== undefined && speedup <= 0) throw new UsageError('--speedup-ratio must be > 0');
  const eosP = optNum('eos-probability', values['eos-probability']);
  if (eosP !== undefined && eosP > 1) throw new UsageError('--eos-probability must be within [0, 1]');
  const format = oneOf('kv-events-format', values['kv-events-format'], ['array', 'map'] as const);
  if ((values['kv-events-replay'] || values['kv-events-topic'] || format) && !values['kv-events-zmq']) {
    throw new UsageError('--kv-events-replay, --kv-events-topic and --kv-events-format need --kv-events-zmq');
  }
  const role = oneOf('role', values.role, ['aggregated', 'prefill', 'decode'] as const);
  if (values['bootstrap-port'] !== undefined && role !== 'prefill') throw new UsageError('--bootstrap-port needs --role prefill');
  if (values['kv-connector'] !== undefined && values.protocol !== 'vllm') throw new UsageError('--kv-connector needs --protocol vllm');
  await runMockEngine({
    modelPath: values['model-path'],
    host: values.host ?? '127.0.0.1',
    port: int('port', values.port, 30000),
    mode: mode('mode', values.mode) ?? 'echo',
    stepMs: num('step-ms', values['step-ms'], 10),
    prefillMsPerToken: num('prefill-ms-per-token', values['prefill-ms-per-token'], 0.02),
    reasoningTokens: opt('reasoning-tokens', values['reasoning-tokens']),
    faults: values.faults === true,
    deterministic: values.deterministic === true,
    shutdownGraceSecs: optNum('shutdown-grace-secs', values['shutdown-grace-secs']),
    register: values.register ? { discovery: values.register, ttlSecs: int('lease-ttl-secs', values['lease-ttl-secs'], 10, 1) } : undefined,
    eventPlane: values['event-plane'],
    modelName: values['model-name'],
    namespace: values.namespace,
    advertiseHost: values['advertise-host'],
    engine: {
      protocol: oneOf('protocol', values.protocol, ['sglang', 'vllm'] as const),
      speedupRatio: speedup,
      dataParallelSize: opt('data-parallel-size', values['data-parallel-size'], 1),
      blockSize: opt('block-size', values['block-size'], 1),
      numBlocks: opt('num-blocks', values['num-blocks'], 1),
      maxRunningRequests: opt('max-num-seqs', values['max-num-seqs'], 1),
      maxNumBatchedTokens: opt('max-num-batched-tokens', values['max-num-batched-tokens'], 1),
      maxContextLength: opt('max-model-len', values['max-model-len'], 2),
      hideContextLength: values['hide-context-length'],
      chunkedPrefill: values['no-chunked-prefill'] ? false : undefined,
      prefixCaching: values['no-prefix-caching'] ? false : undefined,
      decodeMsPerSeq: optNum('decode-ms-per-seq', values['decode-ms-per-seq']),
      decodeMsPerKvToken: optNum('decode-ms-per-kv-token', values['decode-ms-per-kv-token']),
      eosProbability: eosP,
      seed: opt('seed', values.seed),
      streamInterval: opt('stream-interval', values['stream-interval'], 1),
      embeddingDim: opt('embedding-dim', values['embedding-dim'], 0),
      reasoningParser: values['reasoning-parser'],
      toolCallParser: values['tool-call-parser'],
      role,
      bootstrapPort: values['bootstrap-port'] === undefined ? undefined : int('bootstrap-port', values['bootstrap-port'], 0),
      kvTransferMsPerToken: optNum('kv-transfer-ms-per-token', values['kv-transfer-ms-per-token']),
      kvConnector: values['kv-connector'],
      rendezvousTimeoutMs: opt('rendezvous-timeout-ms', values['rendezvous-timeout-ms'], 1),
      kvEventsZmq: values['kv-events-zmq']
        ? { endpoint: values['kv-events-zmq'], replayEndpoint: values['kv-events-replay'], topic: values['kv-events-topic'], layout: format }
        : undefined,
    },
  });
}

async function benchCommand(args: string[]): Promise<number> {
  const { values: v, help } = resolveOptions(BENCH_OPTIONS, args);
  if (help) {
    process.stdout.write(helpText(BENCH_USAGE, BENCH_INTRO, BENCH_OPTIONS));
    return 0;
  }
  return benchMain(v);
}

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case 'serve':
        await serveCommand(rest);
        return 0;
      case 'mock-engine':
        await mockEngineCommand(rest);
        return 0;
      case 'bench':
        return await benchCommand(rest);
      case 'register':
        await registerCommand(rest);
        return 0;
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        process.stdout.write(MAIN_HELP);
        return 0;
      default:
        throw new UsageError(`unknown command '${cmd}'`);
    }
  } catch (err) {
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    console.error(`portico: ${(err as Error).message}`);
    if (usage) console.error("Run 'portico --help' for usage.");
    return usage ? 2 : 1;
  }
}

/** --otlp-traces-endpoint and friends over the OTEL_* variables; a bad value is a usage error. */
function tracingOptions(v: Record<string, unknown>): TracingSettings | null {
  try {
    return tracingSettings({ endpoint: v['otlp-traces-endpoint'] as string | undefined, protocol: v['otlp-traces-protocol'] as string | undefined, sampleRatio: v['trace-sample-ratio'] as number | undefined });
  } catch (err) {
    if (err instanceof TracingSettingsError) throw new UsageError(err.message);
    throw err;
  }
}
