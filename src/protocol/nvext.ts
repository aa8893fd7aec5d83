// NVIDIA request extensions (spec 001): every `nvext` field read, typed and range
// checked, with the routing headers that override body values. Unknown keys inside
// nvext or agent_hints are always a 400. PORTICO_DISABLE_NVEXT=1 (or Dynamo's
// DYN_ENABLE_FRONTEND_NVEXT=false) turns off both nvext and the routing headers.

import { ApiError } from './errors.js';
import { admit } from './admission.js';
import { Fields, FieldTable, JsonType } from './fields.js';
import { countIgnoredHeader } from './ignored-headers.js';

const NVEXT_FIELDS = [
  'greed_sampling',
  'use_raw_prompt',
  'annotations',
  'backend_instance_id',
  'token_data',
  'max_thinking_tokens',
  'cache_salt',
  'extra_fields',
  'prefill_worker_id',
  'decode_worker_id',
  'dp_rank',
  'prefill_dp_rank',
  'agent_hints',
] as const;
const HINT_FIELDS = ['priority', 'strict_priority', 'osl', 'speculative_prefill', 'latency_sensitivity'] as const;

export const EXTRA_FIELDS = ['worker_id', 'timing', 'stop_reason', 'completion_token_ids'] as const;
// Spec 001 names these too; they need engine outputs neither engine protocol (SGLang
// scheduler, vLLM engine) carries, so asking for them is unsupported_parameter, not unknown.
const UNDELIVERABLE_EXTRA_FIELDS: Record<string, string> = {
  engine_data: 'opaque engine metadata',
  routed_experts: 'the routed-expert capture',
};
export type ExtraField = (typeof EXTRA_FIELDS)[number];
export const ANNOTATIONS = ['formatted_prompt', 'token_ids'] as const;
export type Annotation = (typeof ANNOTATIONS)[number];

let tables: { nvext: FieldTable<(typeof NVEXT_FIELDS)[number]>; hints: FieldTable<(typeof HINT_FIELDS)[number]> } | null = null;

export interface AgentHints {
  priority?: number;
  strictPriority?: number;
  osl?: number;
  speculativePrefill: boolean;
  latencySensitivity?: number;
}

export interface NvExt {
  greedSampling: boolean;
  useRawPrompt: boolean;
  annotations: Annotation[];
  backendInstanceId?: number;
  tokenData?: Uint32Array;
  maxThinkingTokens?: number;
  cacheSalt?: string;
  extraFields: Set<ExtraField>;
  prefillWorkerId?: number;
  decodeWorkerId?: number;
  dpRank?: number;
  prefillDpRank?: number;
  /** Prefill routing headers present (unread until the model is known). */
  prefillHeaders?: PrefillHeaders;
  agentHints: AgentHints;
}

export const NO_NVEXT: NvExt = Object.freeze({
  greedSampling: false,
  useRawPrompt: false,
  annotations: [],
  extraFields: new Set<ExtraField>(),
  agentHints: { speculativePrefill: false },
});

export function nvextEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  if (/^(1|true|yes|on)$/i.test(env.PORTICO_DISABLE_NVEXT?.trim() ?? '')) return false;
  if (/^(0|false|no|off)$/i.test(env.DYN_ENABLE_FRONTEND_NVEXT?.trim() ?? '')) return false;
  return true;
}

/**
 * nvextEnabled() of this process's environment, read once: every request asked it, and each
 * process.env read is a getenv() through a V8 interceptor plus two regex tests (0.7% of a
 * 1-token chat request's CPU). The variables are deployment settings, fixed at startup.
 */
let enabledHere: boolean | undefined;
function nvextEnabledHere(): boolean {
  return (enabledHere ??= nvextEnabled());
}

const WORKER_HEADERS = ['x-dynamo-worker-instance-id', 'x-worker-instance-id'];
const DP_RANK_HEADERS = ['x-dynamo-dp-rank', 'x-dp-rank', 'x-data-parallel-rank'];
const PREFILL_ID_HEADERS = ['x-dynamo-prefill-instance-id', 'x-prefill-instance-id'];
const PREFILL_DP_HEADERS = ['x-dynamo-prefill-dp-rank', 'x-prefill-dp-rank'];

/**
 * The prefill routing headers a request carried, unread: they mean something only to a
 * model with prefill workers (src/pipeline/preprocess.ts reads them then; elsewhere they
 * are ignored and counted, as gateways and EPPs set them on every request).
 */
export interface PrefillHeaders {
  /** The first prefill-instance header present, and its value. */
  id?: [name: string, value: string];
  rank?: [name: string, value: string];
  /** Every prefill header present. */
  names: string[];
}

type Header = (name: string) => string;

function bad(message: string, param: string): ApiError {
  return ApiError.badRequest(message, param);
}

const U64_MAX = 2n ** 64n - 1n;

function u64(f: Fields<(typeof NVEXT_FIELDS)[number]>, name: 'backend_instance_id' | 'prefill_worker_id' | 'decode_worker_id'): number | undefined {
  const v = f.integer(name);
  if (v === undefined) return v;
  // Past 2^53 a double is inexact: the literal decides (the gate has said it is an integer).
  if (v < 0 || (v >= 2 ** 53 && BigInt(f.raw(name)!) > U64_MAX)) throw bad(`\`nvext.${name}\` must be an integer from 0 to ${U64_MAX} (u64), got ${f.raw(name)}`, `nvext.${name}`);
  return v;
}

function u32<N extends string>(f: Pick<Fields<N>, 'integer'>, name: N, path: string): number | undefined {
  const v = f.integer(name);
  if (v !== undefined && (v < 0 || v > 0xffffffff)) throw bad(`\`${path}\` must be an integer from 0 to 4294967295`, path);
  return v;
}

function stringList(f: Fields<(typeof NVEXT_FIELDS)[number]>, name: 'annotations' | 'extra_fields'): string[] {
  if (!f.array(name)) return [];
  const list = JSON.parse(f.raw(name)!) as unknown[];
  for (const v of list) if (typeof v !== 'string') throw bad(`\`nvext.${name}\` must be an array of strings`, `nvext.${name}`);
  return list as string[];
}

function headerInt(header: Header, names: readonly string[]): number | undefined {
  for (const name of names) {
    const v = header(name);
    if (v === '') continue;
    if (!/^\d+$/.test(v.trim())) throw bad(`header \`${name}\` must be a non-negative integer, got ${JSON.stringify(v)}`, name);
    return Number(v.trim());
  }
  return undefined;
}

/**
 * Read `nvext` from the body and apply header overrides. `topLevelCacheSalt` is the
 * compatibility top-level `cache_salt` of chat/completions, lowest in precedence.
 */
export function readNvext(
  f: Pick<Fields<'nvext'>, 'object' | 'body'>,
  header: Header,
  topLevelCacheSalt: string | undefined,
  enabled = nvextEnabledHere(),
  ignoreUnsupported = false,
): NvExt {
  const span = f.object('nvext');
  if (!enabled) {
    if (span !== undefined) throw new ApiError(400, '`nvext` is disabled on this server', { param: 'nvext', code: 'unsupported_parameter' });
    return { ...NO_NVEXT, cacheSalt: topLevelCacheSalt || undefined };
  }
  tables ??= { nvext: new FieldTable(NVEXT_FIELDS), hints: new FieldTable(HINT_FIELDS) };
  const n: NvExt = {
    greedSampling: false,
    useRawPrompt: false,
    annotations: [],
    backendInstanceId: undefined,
    tokenData: undefined,
    maxThinkingTokens: undefined,
    cacheSalt: undefined,
    extraFields: new Set(),
    prefillWorkerId: undefined,
    decodeWorkerId: undefined,
    dpRank: undefined,
    prefillDpRank: undefined,
    agentHints: { speculativePrefill: false },
  };
  if (span) {
    const nf = Fields.scan(f.body, tables.nvext, span, 'nvext');
    admit(nf.unknown, 'nvext', false);
    // Admission before validation (spec 000): a thinking budget cannot be delivered, so any
    // value is the same unsupported_parameter (or, in ignore mode, dropped unread).
    if (nf.given('max_thinking_tokens') && !ignoreUnsupported) {
      throw new ApiError(400, '`nvext.max_thinking_tokens` cannot be delivered: the engine protocol has no thinking budget', { param: 'nvext.max_thinking_tokens', code: 'unsupported_parameter' });
    }
    n.greedSampling = nf.boolean('greed_sampling') ?? false;
    n.useRawPrompt = nf.boolean('use_raw_prompt') ?? false;
    for (const a of stringList(nf, 'annotations')) {
      if (!(ANNOTATIONS as readonly string[]).includes(a)) throw bad(`\`nvext.annotations\`: unknown annotation ${JSON.stringify(a)} (known: ${ANNOTATIONS.join(', ')})`, 'nvext.annotations');
      n.annotations.push(a as Annotation);
    }
    for (const x of stringList(nf, 'extra_fields')) {
      if (Object.hasOwn(UNDELIVERABLE_EXTRA_FIELDS, x)) {
        if (ignoreUnsupported) continue;
        throw new ApiError(400, `\`nvext.extra_fields\`: ${JSON.stringify(x)} cannot be served: the engine protocols (SGLang scheduler, vLLM engine) do not return ${UNDELIVERABLE_EXTRA_FIELDS[x]}`, { param: 'nvext.extra_fields', code: 'unsupported_parameter' });
      }
      if (!(EXTRA_FIELDS as readonly string[]).includes(x)) throw bad(`\`nvext.extra_fields\`: unknown field ${JSON.stringify(x)} (known: ${EXTRA_FIELDS.join(', ')})`, 'nvext.extra_fields');
      n.extraFields.add(x as ExtraField);
    }
    n.backendInstanceId = u64(nf, 'backend_instance_id');
    n.prefillWorkerId = u64(nf, 'prefill_worker_id');
    n.decodeWorkerId = u64(nf, 'decode_worker_id');
    n.dpRank = u32(nf, 'dp_rank', 'nvext.dp_rank');
    n.prefillDpRank = u32(nf, 'prefill_dp_rank', 'nvext.prefill_dp_rank');
    n.cacheSalt = nf.string('cache_salt') || undefined;
    if (nf.array('token_data')) {
      const list = JSON.parse(nf.raw('token_data')!) as unknown[];
      const ids = new Uint32Array(list.length);
      list.forEach((v, i) => {
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) throw bad(`\`nvext.token_data\` must hold token ids (u32); item ${i} is ${JSON.stringify(v)}`, 'nvext.token_data');
        ids[i] = v;
      });
      n.tokenData = ids;
    }
    const hints = nf.object('agent_hints');
    if (hints) {
      const hf = Fields.scan(f.body, tables.hints, hints, 'nvext.agent_hints');
      admit(hf.unknown, 'nvext.agent_hints', false);
      const priority = hf.integer('priority');
      if (priority !== undefined && (priority < -2147483648 || priority > 2147483647)) throw bad('`nvext.agent_hints.priority` must be a 32-bit integer', 'nvext.agent_hints.priority');
      const latency = hf.number('latency_sensitivity');
      n.agentHints = {
        priority,
        strictPriority: u32(hf, 'strict_priority', 'nvext.agent_hints.strict_priority'),
        osl: u32(hf, 'osl', 'nvext.agent_hints.osl'),
        speculativePrefill: hf.boolean('speculative_prefill') ?? false,
        latencySensitivity: latency,
      };
    }
    if (nf.type('use_raw_prompt') === JsonType.Null) n.useRawPrompt = false;
  }
  // Routing headers beat body values (spec 001, "Header Overrides").
  const worker = headerInt(header, WORKER_HEADERS);
  if (worker !== undefined) {
    n.backendInstanceId = worker;
    n.decodeWorkerId = worker;
  }
  n.prefillHeaders = prefillHeaders(header);
  n.dpRank = headerInt(header, DP_RANK_HEADERS) ?? n.dpRank;
  // cache_salt precedence: x-tenant-id, then nvext.cache_salt, then top-level; empty = absent.
  n.cacheSalt = header('x-tenant-id') || n.cacheSalt || topLevelCacheSalt || undefined;
  refuseUndeliverable(n);
  return n;
}

function prefillHeaders(header: Header): PrefillHeaders | undefined {
  // (No literal of the two lists per call, no iterator: this runs for every request, and one
  // without these headers allocates nothing here.)
  return prefillHeaderList(header, PREFILL_DP_HEADERS, 'rank', prefillHeaderList(header, PREFILL_ID_HEADERS, 'id', undefined));
}

/** The headers of `names` that are present, added to `out` (made at the first); `key` keeps the first one's value. */
function prefillHeaderList(header: Header, names: readonly string[], key: 'id' | 'rank', out: PrefillHeaders | undefined): PrefillHeaders | undefined {
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const v = header(name);
    if (v === '') continue;
    out ??= { names: [] };
    out.names.push(name);
    out[key] ??= [name, v];
  }
  return out;
}

/**
 * The prefill routing headers on a model with prefill workers: they beat the body's
 * prefill_worker_id / prefill_dp_rank (spec 001, "Header Overrides"). A value that is not a
 * non-negative integer is a 400 naming the header.
 */
export function readPrefillHeaders(h: PrefillHeaders): { id?: number; rank?: number } {
  const int = (e: [string, string] | undefined) => (e === undefined ? undefined : headerInt((n) => (n === e[0] ? e[1] : ''), [e[0]]));
  return { id: int(h.id), rank: int(h.rank) };
}

/** Prefill routing headers on a model without prefill workers: ignored, and counted (ignored-headers.ts). */
export function ignorePrefillHeaders(h: PrefillHeaders): void {
  for (const name of h.names) countIgnoredHeader(name);
}

/** Fields this deployment cannot honour are refused, never silently dropped. */
function refuseUndeliverable(n: NvExt): void {
  if (n.decodeWorkerId !== undefined && n.backendInstanceId !== undefined && n.decodeWorkerId !== n.backendInstanceId) {
    throw ApiError.badRequest('`nvext.backend_instance_id` and `nvext.decode_worker_id` name different workers', 'nvext.decode_worker_id');
  }
}
