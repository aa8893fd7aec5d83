// What tracing is configured to do: the flags of `portico serve` (--otlp-traces-endpoint,
// --otlp-traces-protocol, --trace-sample-ratio) over the standard OTEL_* environment
// variables of the OpenTelemetry SDKs. No endpoint (or OTEL_SDK_DISABLED=true, or
// OTEL_TRACES_EXPORTER=none): tracing is off and no SDK object is made.

export type OtlpProtocol = 'grpc' | 'http/protobuf';

export interface TracingSettings {
  /** Where spans go: http(s)://host:port for gRPC; the full URL (…/v1/traces) for HTTP/protobuf. */
  endpoint: string;
  protocol: OtlpProtocol;
  /** Share of new traces (no sampled parent) that are recorded, in [0, 1]. A client's sampled flag is followed. */
  sampleRatio: number;
  /** The resource's service.name. */
  serviceName: string;
  /** Ended spans held for export; past it new spans are dropped (and counted). */
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduleDelayMs: number;
  exportTimeoutMs: number;
}

/** The tracing flags as given (undefined: not given). */
export interface TracingFlags {
  endpoint?: string;
  protocol?: string;
  sampleRatio?: number;
}

/** A setting that cannot be used; the message names the flag or variable and the value. */
export class TracingSettingsError extends Error {}

const PROTOCOLS: readonly string[] = ['grpc', 'http/protobuf'];

/** The settings, or null when tracing is off. Throws TracingSettingsError for a bad value. */
export function tracingSettings(flags: TracingFlags, env: NodeJS.ProcessEnv = process.env): TracingSettings | null {
  if (envValue(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return null;
  const exporter = envValue(env, 'OTEL_TRACES_EXPORTER');
  if (exporter !== undefined && exporter !== 'otlp') {
    if (exporter === 'none') return null;
    throw new TracingSettingsError(`OTEL_TRACES_EXPORTER must be 'otlp' or 'none', got '${exporter}'`);
  }
  const protocol = flags.protocol ?? envValue(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? envValue(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'grpc';
  if (!PROTOCOLS.includes(protocol)) {
    throw new TracingSettingsError(`the OTLP traces protocol must be 'grpc' or 'http/protobuf' (--otlp-traces-protocol, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL), got '${protocol}'`);
  }
  const endpoint = traceEndpoint(flags.endpoint, env, protocol as OtlpProtocol);
  const sampleRatio = flags.sampleRatio ?? envRatio(env);
  if (!(sampleRatio >= 0 && sampleRatio <= 1)) throw new TracingSettingsError(`--trace-sample-ratio must be between 0 and 1, got ${sampleRatio}`);
  if (endpoint === null) return null;
  const maxQueueSize = envInt(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1);
  return {
    endpoint,
    protocol: protocol as OtlpProtocol,
    sampleRatio,
    serviceName: envValue(env, 'OTEL_SERVICE_NAME') ?? 'portico',
    maxQueueSize,
    maxExportBatchSize: Math.min(maxQueueSize, envInt(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1)),
    scheduleDelayMs: envInt(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 0),
    exportTimeoutMs: envInt(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30000, 1),
  };
}

/**
 * The flag's endpoint, else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is), else
 * OTEL_EXPORTER_OTLP_ENDPOINT (for HTTP/protobuf with /v1/traces appended, as the
 * specification says). A bare host:port (vLLM's --otlp-traces-endpoint accepts one) means http://.
 */
function traceEndpoint(flag: string | undefined, env: NodeJS.ProcessEnv, protocol: OtlpProtocol): string | null {
  const own = flag ?? envValue(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = own === undefined ? envValue(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') : undefined;
  const raw = own ?? base;
  if (raw === undefined) return null;
  const where = flag !== undefined ? '--otlp-traces-endpoint' : own !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new TracingSettingsError(`${where} must be a URL such as http://collector:4317, got '${raw}'`);
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '') {
    throw new TracingSettingsError(`${where} must be an http:// or https:// URL with a host, got '${raw}'`);
  }
  if (protocol === 'grpc') return `${u.protocol}//${u.host}`;
  if (base !== undefined) return `${withScheme.replace(/\/+$/, '')}/v1/traces`;
  // HTTP/protobuf: a URL without a path means the standard one.
  return u.pathname === '/' && !withScheme.endsWith('/') ? `${withScheme}/v1/traces` : withScheme;
}

/** OTEL_TRACES_SAMPLER(_ARG): the ratio of the standard samplers Portico can follow. */
function envRatio(env: NodeJS.ProcessEnv): number {
  const sampler = envValue(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on';
  switch (sampler) {
    case 'always_on':
    case 'parentbased_always_on':
      return 1;
    case 'always_off':
    case 'parentbased_always_off':
      return 0;
    case 'traceidratio':
    case 'parentbased_traceidratio': {
      const arg = envValue(env, 'OTEL_TRACES_SAMPLER_ARG');
      if (arg === undefined) return 1;
      const n = Number(arg);
      if (!Number.isFinite(n) || n < 0 || n > 1) throw new TracingSettingsError(`OTEL_TRACES_SAMPLER_ARG must be a number between 0 and 1, got '${arg}'`);
      return n;
    }
    default:
      throw new TracingSettingsError(`OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio and their parentbased_ forms, got '${sampler}'`);
  }
}

function envInt(env: NodeJS.ProcessEnv, name: string, def: number, min: number): number {
  const v = envValue(env, name);
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new TracingSettingsError(`${name} must be an integer of at least ${min}, got '${v}'`);
  return n;
}

/** An environment variable; empty counts as unset (as the SDKs read them). */
function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}
