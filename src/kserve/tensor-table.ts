// Every tensor the KServe face accepts and returns, in one table: the request reader
// (./request.ts) checks datatypes and shapes against it, and ModelMetadata / ModelConfig
// (./metadata.ts) describe it, so the description cannot drift from what is accepted.
// The names are those Triton's LLM backends use (vLLM and TensorRT-LLM backends).

/** How an input's shape is judged: one element ([1] or [1, 1]), or a list ([N] or [1, N]). */
export type Arity = 'scalar' | 'list';

export interface InputSpec {
  readonly name: string;
  /** Accepted datatypes; the first is the one metadata names. */
  readonly datatypes: readonly string[];
  readonly arity: Arity;
  /** What the input is for (docs/kserve.md says the same). */
  readonly doc: string;
}

export const INPUTS: readonly InputSpec[] = [
  { name: 'text_input', datatypes: ['BYTES'], arity: 'scalar', doc: 'the prompt, UTF-8 (tokenized as a completions prompt is; exactly one of text_input and input_ids)' },
  { name: 'input_ids', datatypes: ['INT32', 'UINT32', 'INT64'], arity: 'list', doc: 'the prompt as token ids, skipping the tokenizer' },
  { name: 'stream', datatypes: ['BOOL'], arity: 'scalar', doc: 'ModelStreamInfer: one response per generated piece (default false: one response)' },
  { name: 'streaming', datatypes: ['BOOL'], arity: 'scalar', doc: 'the same as stream (TensorRT-LLM backend name)' },
  { name: 'sampling_parameters', datatypes: ['BYTES'], arity: 'scalar', doc: "a JSON object of sampling settings, as Triton's vLLM backend takes them" },
  { name: 'max_tokens', datatypes: ['INT32'], arity: 'scalar', doc: 'most tokens to generate (default 16)' },
  { name: 'temperature', datatypes: ['FP32'], arity: 'scalar', doc: 'sampling temperature, 0..2' },
  { name: 'top_p', datatypes: ['FP32'], arity: 'scalar', doc: 'nucleus sampling, 0..1' },
  { name: 'top_k', datatypes: ['INT32'], arity: 'scalar', doc: 'top-k sampling (-1: off)' },
  { name: 'seed', datatypes: ['INT64'], arity: 'scalar', doc: 'sampling seed' },
  { name: 'stop', datatypes: ['BYTES'], arity: 'list', doc: 'stop strings' },
  { name: 'ignore_eos', datatypes: ['BOOL'], arity: 'scalar', doc: 'go on past the end-of-sequence token' },
];

export type OutputName = 'text_output' | 'finish_reason' | 'output_ids';

export interface OutputSpec {
  readonly name: OutputName;
  readonly datatype: string;
  readonly doc: string;
}

export const OUTPUTS: readonly OutputSpec[] = [
  { name: 'text_output', datatype: 'BYTES', doc: 'the generated text (on a stream: the new text of this response)' },
  { name: 'finish_reason', datatype: 'BYTES', doc: 'why generation ended: stop, length or abort (on a stream: on the final response)' },
  { name: 'output_ids', datatype: 'INT32', doc: 'the generated token ids (on a stream: the new ids of this response)' },
];

export const INPUT_BY_NAME: ReadonlyMap<string, InputSpec> = new Map(INPUTS.map((s) => [s.name, s]));
export const OUTPUT_BY_NAME: ReadonlyMap<string, OutputSpec> = new Map(OUTPUTS.map((s) => [s.name, s]));

/** The shape metadata shows: -1 is a dimension of any size. */
export function metadataShape(s: InputSpec): number[] {
  return s.arity === 'scalar' ? [1] : [-1];
}
