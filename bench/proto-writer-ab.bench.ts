// A/B: the SGLang GenerateRequest of a short chat (11 prompt tokens, max_tokens 16, two stop
// token ids, stream), gRPC-framed, written by Portico's ProtoWriter (src/engine/proto-writer.ts,
// what encodeSglangGenerate uses) against @bufbuild/protobuf/wire's BinaryWriter writing the
// same fields in the same order (then framed with frameMessage). Both outputs are checked to be
// the same bytes first. Rounds alternate A and B so both see the same machine load; the figure
// is the median over rounds of ns per encoded request.
//
// Run: npm run build:ts && node dist/bench/proto-writer-ab.bench.js [rounds=7] [iterations=200000]

import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';

import { frameMessage } from '../src/engine/grpc-h2.js';
import { encodeSglangGenerate } from '../src/engine/sglang-generate-wire.js';
import type { GenerateParams } from '../src/engine/types.js';

const rounds = Number(process.argv[2] ?? 7);
const N = Number(process.argv[3] ?? 200_000);

const p: GenerateParams = {
  requestId: 'chatcmpl-8f2c1a7e3b5d4c6e9a0b1c2d',
  inputIds: Uint32Array.from([151644, 872, 198, 45764, 23811, 13, 151645, 198, 151644, 77091, 198]),
  stream: true,
  maxNewTokens: 16,
  temperature: 0.7,
  stopTokenIds: [151645, 151643],
};

/** The fields encodeSglangGenerate writes for `p`, through BinaryWriter. */
function viaBinaryWriter(q: GenerateParams): Buffer {
  const w = new BinaryWriter();
  w.tag(1, WireType.LengthDelimited).string(q.requestId);
  w.tag(2, WireType.LengthDelimited).fork();
  w.tag(2, WireType.LengthDelimited).fork();
  for (const id of q.inputIds) w.uint32(id);
  w.join();
  w.join();
  w.tag(4, WireType.LengthDelimited).fork();
  w.tag(1, WireType.Bit32).float(q.temperature ?? 1);
  w.tag(2, WireType.Bit32).float(q.topP ?? 1);
  w.tag(3, WireType.Varint).int32(-1);
  w.tag(7, WireType.Bit32).float(q.repetitionPenalty ?? 1);
  if (q.maxNewTokens !== undefined) w.tag(8, WireType.Varint).uint32(q.maxNewTokens);
  if (q.stopTokenIds) {
    w.tag(10, WireType.LengthDelimited).fork();
    for (const id of q.stopTokenIds) w.uint32(id);
    w.join();
  }
  w.tag(11, WireType.Varint).bool(true);
  w.tag(12, WireType.Varint).bool(true);
  w.tag(17, WireType.Varint).uint32(Math.max(1, q.n ?? 1));
  w.join();
  w.tag(6, WireType.Varint).int32(-1);
  if (q.stream) w.tag(17, WireType.Varint).bool(true);
  return frameMessage(w.finish());
}

const a = encodeSglangGenerate(p);
const b = viaBinaryWriter(p);
if (!a.equals(b)) {
  console.error(`the two encoders differ:\nA ${a.toString('hex')}\nB ${b.toString('hex')}`);
  process.exit(1);
}

function time(f: (q: GenerateParams) => Buffer): number {
  let sink = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) sink += f(p).length;
  const ns = Number(process.hrtime.bigint() - t0) / N;
  if (sink === 0) throw new Error('unreachable');
  return ns;
}

// Warm-up: both paths optimized before timing.
time(encodeSglangGenerate);
time(viaBinaryWriter);
const runs: Record<'A' | 'B', number[]> = { A: [], B: [] };
console.log(`${a.length}-byte frame, ${N} encodes per round, ${rounds} rounds\n| round | A ProtoWriter ns/req | B BinaryWriter ns/req | B/A |\n|---|---:|---:|---:|`);
for (let r = 1; r <= rounds; r++) {
  const first = r % 2 ? 'A' : 'B';
  const t: Record<'A' | 'B', number> = { A: 0, B: 0 };
  for (const k of first === 'A' ? (['A', 'B'] as const) : (['B', 'A'] as const)) t[k] = time(k === 'A' ? encodeSglangGenerate : viaBinaryWriter);
  runs.A.push(t.A);
  runs.B.push(t.B);
  console.log(`| ${r} | ${t.A.toFixed(0)} | ${t.B.toFixed(0)} | ${(t.B / t.A).toFixed(2)} |`);
}
const median = (v: number[]) => [...v].sort((x, y) => x - y)[Math.floor(v.length / 2)]!;
console.log(`median A ${median(runs.A).toFixed(0)} ns, B ${median(runs.B).toFixed(0)} ns, B/A ${(median(runs.B) / median(runs.A)).toFixed(2)}`);
