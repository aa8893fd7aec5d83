// KServe v2 gRPC test helpers: a real `portico serve` with its gRPC port, a Connect gRPC
// client of inference.GRPCInferenceService over HTTP/2, and builders / readers for the
// tensors (contents and raw_input_contents layouts) the tests send and check.

import { create } from '@bufbuild/protobuf';
import { createClient, type Client, type Interceptor } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import {
  GRPCInferenceService,
  ModelInferRequestSchema,
  type InferParameter,
  type ModelInferRequest,
  type ModelInferRequest_InferInputTensor,
  type ModelInferResponse,
} from '../../src/gen/kserve/grpc_service_pb.js';
import { startPortico, type Proc } from './portico.js';

export type KserveClient = Client<typeof GRPCInferenceService>;

export interface KserveServer {
  proc: Proc;
  grpcPort: number;
  client: KserveClient;
}

/** The gRPC port `portico serve` printed ("KServe gRPC listening on HOST:PORT"). */
export async function grpcPortOf(proc: Proc): Promise<number> {
  for (let i = 0; i < 6000; i++) {
    const m = /KServe gRPC listening on \S+:(\d+)/.exec(proc.output());
    if (m) return Number(m[1]);
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no gRPC listening line:\n${proc.output()}`);
}

export function kserveClient(port: number, interceptors: Interceptor[] = []): KserveClient {
  return createClient(GRPCInferenceService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}`, interceptors }));
}

/** Start `portico serve <args> --grpc-port 0` and a client of its gRPC port. */
export async function startKserve(args: string[], env: NodeJS.ProcessEnv = {}): Promise<KserveServer> {
  const proc = await startPortico(['serve', '--http-port', '0', '--grpc-port', '0', '--host', '127.0.0.1', ...args], env);
  const grpcPort = await grpcPortOf(proc);
  return { proc, grpcPort, client: kserveClient(grpcPort) };
}

type Tensor = Pick<ModelInferRequest_InferInputTensor, 'name' | 'datatype'> & { shape: bigint[]; contents?: ModelInferRequest_InferInputTensor['contents'] };

export const text = (name: string, ...values: string[]): Tensor => ({ name, datatype: 'BYTES', shape: [BigInt(values.length)], contents: { bytesContents: values.map((v) => Buffer.from(v)) } as never });
export const int32 = (name: string, ...values: number[]): Tensor => ({ name, datatype: 'INT32', shape: [BigInt(values.length)], contents: { intContents: values } as never });
export const uint32 = (name: string, ...values: number[]): Tensor => ({ name, datatype: 'UINT32', shape: [BigInt(values.length)], contents: { uintContents: values } as never });
export const int64 = (name: string, ...values: number[]): Tensor => ({ name, datatype: 'INT64', shape: [BigInt(values.length)], contents: { int64Contents: values.map(BigInt) } as never });
export const fp32 = (name: string, v: number): Tensor => ({ name, datatype: 'FP32', shape: [1n], contents: { fp32Contents: [v] } as never });
export const bool = (name: string, v: boolean): Tensor => ({ name, datatype: 'BOOL', shape: [1n], contents: { boolContents: [v] } as never });

export const param = {
  int: (v: number): InferParameter => ({ parameterChoice: { case: 'int64Param', value: BigInt(v) } }) as InferParameter,
  double: (v: number): InferParameter => ({ parameterChoice: { case: 'doubleParam', value: v } }) as InferParameter,
  bool: (v: boolean): InferParameter => ({ parameterChoice: { case: 'boolParam', value: v } }) as InferParameter,
  string: (v: string): InferParameter => ({ parameterChoice: { case: 'stringParam', value: v } }) as InferParameter,
};

export function inferRequest(model: string, inputs: Tensor[], more: Partial<Pick<ModelInferRequest, 'id' | 'parameters' | 'rawInputContents' | 'modelVersion'>> & { outputs?: string[] } = {}): ModelInferRequest {
  return create(ModelInferRequestSchema, {
    modelName: model,
    id: more.id ?? '',
    modelVersion: more.modelVersion ?? '',
    inputs: inputs as never,
    parameters: more.parameters ?? {},
    rawInputContents: more.rawInputContents ?? [],
    outputs: (more.outputs ?? []).map((name) => ({ name })),
  });
}

/** BYTES elements in the raw layout (4-byte little-endian length before each). */
export function rawBytes(...values: string[]): Uint8Array {
  return Buffer.concat(values.flatMap((v) => {
    const b = Buffer.from(v);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(b.length);
    return [len, b];
  }));
}

/** An output tensor's raw bytes (responses carry every output in raw_output_contents). */
function rawOutput(res: ModelInferResponse, name: string): Uint8Array | undefined {
  const i = res.outputs.findIndex((o) => o.name === name);
  return i < 0 ? undefined : res.rawOutputContents[i];
}

/** A BYTES output's first element as text, or undefined when the response has no such output. */
export function outputText(res: ModelInferResponse, name: string): string | undefined {
  const raw = rawOutput(res, name);
  if (!raw) return undefined;
  const b = Buffer.from(raw);
  const len = b.readUInt32LE(0);
  assertEq(b.length, 4 + len, `${name} holds one BYTES element`);
  return b.toString('utf8', 4, 4 + len);
}

/** An INT32 output's elements, or undefined when absent. */
export function outputIds(res: ModelInferResponse, name = 'output_ids'): number[] | undefined {
  const raw = rawOutput(res, name);
  if (!raw) return undefined;
  const b = Buffer.from(raw);
  return Array.from({ length: b.length / 4 }, (_, i) => b.readInt32LE(i * 4));
}

export function finalFlag(res: ModelInferResponse): boolean | undefined {
  const p = res.parameters.triton_final_response?.parameterChoice;
  return p?.case === 'boolParam' ? p.value : undefined;
}

function assertEq(a: unknown, b: unknown, what: string): void {
  if (a !== b) throw new Error(`${what}: ${String(a)} !== ${String(b)}`);
}

/** An async iterable of requests the test can push to and end (a bidirectional stream's input). */
export class RequestStream implements AsyncIterable<ModelInferRequest> {
  private items: ModelInferRequest[] = [];
  private ended = false;
  private wake: (() => void) | null = null;

  push(r: ModelInferRequest): void {
    this.items.push(r);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ModelInferRequest> {
    for (;;) {
      const r = this.items.shift();
      if (r) {
        yield r;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((res) => (this.wake = res));
      this.wake = null;
    }
  }
}
