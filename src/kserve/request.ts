// A ModelInferRequest read into what a generation needs: the prompt (text or token ids),
// the sampling settings, whether to stream, and the outputs to return. Each input tensor
// is checked against the table (./tensor-table.ts: known name, datatype, shape) and
// decoded once (./tensors.ts). Sampling settings come from three places, later ones
// winning: request `parameters`, the `sampling_parameters` JSON tensor (Triton's vLLM
// backend), then the per-setting tensors; the merged settings are validated by the same
// reader as the HTTP APIs' (protocol/sampling.ts), so the same limits and messages apply.

import { ApiError } from '../protocol/errors.js';
import { FieldTable, Fields } from '../protocol/fields.js';
import { readSampling, SAMPLING_FIELDS, type SamplingField, type SamplingOptions } from '../protocol/sampling.js';
import { DEFAULT_COMPLETION_MAX_TOKENS } from '../protocol/completion-request.js';
import type { InferParameter, ModelInferRequest } from '../gen/kserve/grpc_service_pb.js';
import { INPUT_BY_NAME, INPUTS, OUTPUT_BY_NAME, OUTPUTS, type InputSpec, type OutputName } from './tensor-table.js';
import { readBools, readBytes, readFloats, readIntegers, tensorError, type InputTensor } from './tensors.js';

export type InferPrompt = { kind: 'text'; text: string } | { kind: 'ids'; ids: Uint32Array };

export interface InferRequest {
  /** The request's `id`, echoed on every response. */
  id: string;
  prompt: InferPrompt;
  /** One response per generated piece (ModelStreamInfer only). */
  stream: boolean;
  sampling: SamplingOptions;
  /** The outputs to return, in order. */
  outputs: OutputName[];
}

/** The sampling settings a request may give, and the JSON type each is read as. */
const SETTINGS: ReadonlyMap<string, 'int' | 'float' | 'bool' | 'stop' | 'ids'> = new Map([
  ['max_tokens', 'int'],
  ['temperature', 'float'],
  ['top_p', 'float'],
  ['top_k', 'int'],
  ['min_p', 'float'],
  ['frequency_penalty', 'float'],
  ['presence_penalty', 'float'],
  ['repetition_penalty', 'float'],
  ['seed', 'int'],
  ['min_tokens', 'int'],
  ['stop', 'stop'],
  ['stop_token_ids', 'ids'],
  ['ignore_eos', 'bool'],
  ['include_stop_str_in_output', 'bool'],
]);

/** Request parameters Triton clients set for Triton's own features: accepted and not used. */
const TRITON_PARAMETERS = new Set(['sequence_id', 'sequence_start', 'sequence_end', 'priority', 'timeout', 'triton_enable_empty_final_response']);

let samplingTable: FieldTable<SamplingField> | undefined;

export function readInferRequest(req: ModelInferRequest): InferRequest {
  const raw = req.rawInputContents;
  if (raw.length > 0 && raw.length !== req.inputs.length) {
    throw ApiError.badRequest(`raw_input_contents has ${raw.length} entries for ${req.inputs.length} inputs: give one per input, or none`, 'raw_input_contents');
  }
  const settings: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(req.parameters)) {
    if (TRITON_PARAMETERS.has(name)) continue;
    if (name === 'stream' || name === 'streaming') continue; // read below with the tensors
    if (!SETTINGS.has(name)) throw ApiError.badRequest(`unknown request parameter \`${name}\` (accepted: ${[...SETTINGS.keys()].join(', ')})`, name);
    settings[name] = parameterValue(name, p);
  }

  const seen = new Map<string, InputTensor>();
  for (let i = 0; i < req.inputs.length; i++) {
    const t = req.inputs[i];
    const spec = INPUT_BY_NAME.get(t.name);
    if (!spec) throw tensorError(t.name, `unknown input (this model takes ${INPUTS.map((s) => s.name).join(', ')})`);
    if (seen.has(t.name)) throw tensorError(t.name, 'given twice');
    if (!spec.datatypes.includes(t.datatype)) throw tensorError(t.name, `datatype must be ${spec.datatypes.join(' or ')}, got ${JSON.stringify(t.datatype)}`);
    checkShape(spec, t.shape, t.name);
    seen.set(t.name, { name: t.name, datatype: t.datatype, shape: t.shape, contents: t.contents, raw: raw.length > 0 ? raw[i] : undefined });
  }

  const text = seen.get('text_input');
  const ids = seen.get('input_ids');
  if (text && ids) throw tensorError('input_ids', 'give text_input or input_ids, not both');
  if (!text && !ids) throw ApiError.badRequest('the request needs an input tensor `text_input` (BYTES) or `input_ids` (INT32)', 'text_input');
  const prompt: InferPrompt = text ? { kind: 'text', text: utf8(text, readBytes(text)[0]) } : { kind: 'ids', ids: tokenIds(ids!) };

  const sp = seen.get('sampling_parameters');
  if (sp) Object.assign(settings, samplingParameters(utf8(sp, readBytes(sp)[0])));
  for (const t of seen.values()) {
    const kind = SETTINGS.get(t.name);
    if (!kind) continue;
    if (t.name === 'stop') settings.stop = readBytes(t).map((b) => utf8(t, b));
    else if (kind === 'bool') settings[t.name] = readBools(t)[0];
    else if (kind === 'float') settings[t.name] = readFloats(t)[0];
    else settings[t.name] = readIntegers(t)[0];
  }

  const streamTensor = seen.get('stream') ?? seen.get('streaming');
  const streamParam = req.parameters.stream ?? req.parameters.streaming;
  const stream = streamTensor ? readBools(streamTensor)[0] : streamParam ? parameterValue('stream', streamParam) === true : false;

  samplingTable ??= new FieldTable(SAMPLING_FIELDS);
  const sampling = readSampling(Fields.scan(Buffer.from(JSON.stringify(settings)), samplingTable));
  return {
    id: req.id,
    prompt,
    stream,
    sampling: { ...sampling, maxTokens: sampling.maxTokens ?? DEFAULT_COMPLETION_MAX_TOKENS },
    outputs: requestedOutputs(req, prompt.kind),
  };
}

/** [1] or [1, 1] for one element; [N] or [1, N] for a list. */
function checkShape(spec: InputSpec, shape: readonly bigint[], name: string): void {
  const dims = shape.map(Number);
  const ok = spec.arity === 'scalar' ? (dims.length === 1 && dims[0] === 1) || (dims.length === 2 && dims[0] === 1 && dims[1] === 1) : (dims.length === 1 && dims[0] >= 1) || (dims.length === 2 && dims[0] === 1 && dims[1] >= 1);
  if (!ok) throw tensorError(name, `shape must be ${spec.arity === 'scalar' ? '[1] or [1, 1]' : '[N] or [1, N] with N at least 1'}, got [${dims.join(', ')}]`);
}

function utf8(t: InputTensor, b: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(b);
  } catch {
    throw tensorError(t.name, 'is not valid UTF-8');
  }
}

function tokenIds(t: InputTensor): Uint32Array {
  const v = readIntegers(t);
  const out = new Uint32Array(v.length);
  for (let i = 0; i < v.length; i++) {
    if (v[i] < 0 || v[i] > 0xffffffff) throw tensorError(t.name, `token id ${v[i]} is not a non-negative 32-bit integer`);
    out[i] = v[i];
  }
  return out;
}

/** The value of a request parameter, converted to the setting's JSON type. */
function parameterValue(name: string, p: InferParameter): unknown {
  const c = p.parameterChoice;
  switch (c.case) {
    case 'boolParam':
    case 'doubleParam':
      return c.value;
    case 'int64Param':
    case 'uint64Param':
      if (c.value > BigInt(Number.MAX_SAFE_INTEGER) || c.value < BigInt(Number.MIN_SAFE_INTEGER)) throw ApiError.badRequest(`request parameter \`${name}\`: value ${c.value} is out of range`, name);
      return Number(c.value);
    case 'stringParam':
      return looseValue(name, c.value, 'parameter');
    default:
      throw ApiError.badRequest(`request parameter \`${name}\` has no value`, name);
  }
}

/**
 * A setting given as a string (Triton's vLLM backend takes sampling_parameters values as
 * strings too: {"temperature": "0.1"}): converted to the setting's type when it reads as one.
 */
function looseValue(name: string, v: unknown, where: string): unknown {
  if (typeof v !== 'string') return v;
  const kind = SETTINGS.get(name);
  if (kind === 'int' || kind === 'float') {
    const n = v.trim() === '' ? NaN : Number(v);
    if (!Number.isFinite(n)) throw ApiError.badRequest(`${where} \`${name}\` must be a number, got ${JSON.stringify(v)}`, name);
    return n;
  }
  if (kind === 'bool') {
    const s = v.trim().toLowerCase();
    if (s === 'true' || s === '1') return true;
    if (s === 'false' || s === '0') return false;
    throw ApiError.badRequest(`${where} \`${name}\` must be a boolean, got ${JSON.stringify(v)}`, name);
  }
  return v;
}

function samplingParameters(text: string): Record<string, unknown> {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (err) {
    throw tensorError('sampling_parameters', `is not valid JSON (${(err as Error).message})`);
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw tensorError('sampling_parameters', 'must be a JSON object');
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (!SETTINGS.has(k)) throw tensorError('sampling_parameters', `unknown key \`${k}\` (accepted: ${[...SETTINGS.keys()].join(', ')})`);
    if (v !== null) out[k] = looseValue(k, v, 'sampling_parameters');
  }
  return out;
}

function requestedOutputs(req: ModelInferRequest, prompt: InferPrompt['kind']): OutputName[] {
  if (req.outputs.length === 0) return prompt === 'text' ? ['text_output', 'finish_reason'] : ['output_ids', 'finish_reason'];
  const out: OutputName[] = [];
  for (const o of req.outputs) {
    const spec = OUTPUT_BY_NAME.get(o.name);
    if (!spec) throw ApiError.badRequest(`unknown output \`${o.name}\` (this model returns ${OUTPUTS.map((s) => s.name).join(', ')})`, o.name);
    if (out.includes(spec.name)) throw ApiError.badRequest(`output \`${o.name}\` requested twice`, o.name);
    out.push(spec.name);
  }
  return out;
}
