// EngineMultimodal → the body of MultimodalInputs, for both engine protocols
// (sglang_scheduler.proto field 3, vllm_engine.proto field 7 of GenerateRequest).
// The pixel tensor is megabytes: its length prefixes are computed up front and its bytes
// are not copied at all: the writer keeps a reference (ProtoWriter.external) and the
// request goes out as parts (finishFrameParts), the tensor written to the socket from the
// processor's own buffer. The small fields around it are written into a scratch writer.

import type { EngineMultimodal, EngineTensor } from './types.js';
import { ProtoWriter, varintSize, WIRE_LEN, WIRE_VARINT } from './proto-writer.js';

const small = new ProtoWriter();

export type MultimodalProtocol = 'sglang' | 'vllm';

/** Fields of TensorData on both protocols: 1 data/inline, 2 shape (packed), 3 dtype. */
function tensorHeadSize(t: EngineTensor): number {
  let shape = 0;
  for (const d of t.shape) shape += varintSize(d);
  const n = t.data.length;
  return (n > 0 ? 1 + varintSize(n) + n : 0) + (shape > 0 ? 1 + varintSize(shape) + shape : 0) + 1 + varintSize(t.dtype.length) + t.dtype.length;
}

/** A TensorData; `external`: its data is written by reference (ProtoWriter.external), not copied. */
function writeTensor(w: ProtoWriter, t: EngineTensor, name: string, external = false): void {
  if (t.data.length > 0) {
    w.tag(1, WIRE_LEN);
    if (external) w.length(t.data.length).external(t.data);
    else w.bytes(t.data);
  }
  w.packedUint32(2, t.shape, name);
  w.tag(3, WIRE_LEN).string(t.dtype);
}

/** Everything of MultimodalInputs after its pixel_values field, into `small`. */
function writeRest(m: EngineMultimodal, protocol: MultimodalProtocol): Buffer {
  const w = small.begin();
  const mapField = protocol === 'sglang' ? 9 : 3;
  for (const [key, t] of m.modelTensors) {
    w.tag(mapField, WIRE_LEN).fork();
    w.tag(1, WIRE_LEN).string(key);
    w.tag(2, WIRE_LEN).fork();
    writeTensor(w, t, `MultimodalInputs.model_specific_tensors[${key}]`);
    w.join();
    w.join();
  }
  w.tag(protocol === 'sglang' ? 10 : 4, WIRE_VARINT).uint32(m.imTokenId, 'MultimodalInputs.im_token_id');
  const phField = protocol === 'sglang' ? 11 : 5;
  for (const p of m.placeholders) {
    w.tag(phField, WIRE_LEN).fork();
    if (p.offset !== 0) w.tag(1, WIRE_VARINT).uint32(p.offset, 'PlaceholderRange.offset');
    if (p.length !== 0) w.tag(2, WIRE_VARINT).uint32(p.length, 'PlaceholderRange.length');
    w.join();
  }
  if (protocol === 'vllm') {
    for (const h of m.hashes) w.tag(6, WIRE_LEN).string(h);
    for (const k of m.batchedKeys) w.tag(7, WIRE_LEN).string(k);
    for (const [k, v] of m.flatKeys) {
      w.tag(8, WIRE_LEN).fork();
      w.tag(1, WIRE_LEN).string(k);
      w.tag(2, WIRE_LEN).string(v);
      w.join();
    }
    for (const k of m.keepOnCpuKeys) w.tag(9, WIRE_LEN).string(k);
    // 10 modality: IMAGE (common.proto Modality = 1)
    w.tag(10, WIRE_VARINT).uint32(1, 'MultimodalInputs.modality');
  }
  return w.finishBody();
}

/** Writes field `field` (MultimodalInputs) of a GenerateRequest into `w`. */
export function writeMultimodal(w: ProtoWriter, field: number, m: EngineMultimodal, protocol: MultimodalProtocol): void {
  const rest = writeRest(m, protocol);
  if (m.pixelValues === null) {
    w.tag(field, WIRE_LEN).length(rest.length);
    w.raw(rest);
    return;
  }
  const pixField = protocol === 'sglang' ? 4 : 2;
  const head = tensorHeadSize(m.pixelValues);
  const body = 1 + varintSize(head) + head + rest.length;
  w.tag(field, WIRE_LEN).length(body);
  w.tag(pixField, WIRE_LEN).length(head);
  // The pixel tensor is megabytes: it goes out by reference, never copied into the frame.
  writeTensor(w, m.pixelValues, 'MultimodalInputs.pixel_values', true);
  w.raw(rest);
}
