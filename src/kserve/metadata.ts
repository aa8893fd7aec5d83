// ModelMetadata and ModelConfig answers, both made from the tensor table
// (./tensor-table.ts) so that they describe exactly what the request reader accepts.

import { create } from '@bufbuild/protobuf';
import { ModelMetadataResponseSchema, type ModelMetadataResponse } from '../gen/kserve/grpc_service_pb.js';
import { DataType, ModelConfigSchema, type ModelConfig } from '../gen/kserve/model_config_pb.js';
import { INPUTS, OUTPUTS, metadataShape } from './tensor-table.js';

/** The one model version Portico serves ('' in a request means it too). */
export const MODEL_VERSION = '1';
/** What ModelMetadata says the model runs on, and ModelConfig's backend. */
export const PLATFORM = 'portico';

const DATA_TYPES: Record<string, DataType> = { BYTES: DataType.TYPE_STRING, BOOL: DataType.TYPE_BOOL, INT32: DataType.TYPE_INT32, UINT32: DataType.TYPE_UINT32, INT64: DataType.TYPE_INT64, FP32: DataType.TYPE_FP32 };

export function modelMetadata(name: string): ModelMetadataResponse {
  return create(ModelMetadataResponseSchema, {
    name,
    versions: [MODEL_VERSION],
    platform: PLATFORM,
    inputs: INPUTS.map((s) => ({ name: s.name, datatype: s.datatypes[0], shape: metadataShape(s).map(BigInt) })),
    outputs: OUTPUTS.map((s) => ({ name: s.name, datatype: s.datatype, shape: [-1n] })),
  });
}

export function modelConfig(name: string, contextLength: number | null): ModelConfig {
  return create(ModelConfigSchema, {
    name,
    platform: PLATFORM,
    backend: PLATFORM,
    maxBatchSize: 0,
    // Every input is optional on its own: a request needs text_input or input_ids.
    input: INPUTS.map((s) => ({ name: s.name, dataType: DATA_TYPES[s.datatypes[0]], dims: metadataShape(s).map(BigInt), optional: true })),
    output: OUTPUTS.map((s) => ({ name: s.name, dataType: DATA_TYPES[s.datatype], dims: [-1n] })),
    parameters: {
      // The other datatypes input_ids takes (metadata names one per tensor).
      input_ids_datatypes: { stringValue: INPUTS.find((s) => s.name === 'input_ids')!.datatypes.join(',') },
      ...(contextLength === null ? {} : { context_length: { stringValue: String(contextLength) } }),
    },
    modelTransactionPolicy: { decoupled: true },
  });
}
