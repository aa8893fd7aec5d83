// Render + encode of the one-message chat body the unary A/Bs send (bench/chat-cpu-ab), alone
// in a node loop: the prompt work of a short request with warm caches (the encoder's word
// cache included). Then the render alone, so the encode part is the difference. CPU per call,
// 7 runs of 20 000 calls, sorted; a native addon A/B runs this once per build.
//   npm run build:ts && taskset -c 0 node dist/bench/encode-chat.bench.js

import { Model } from '../src/native/core.js';
import { QWEN3 } from './wrk-harness.js';

const model = Model.load(QWEN3);
const body = Buffer.from('{"model":"models","messages":[{"role":"user","content":"Hello there, how are you today?"}],"max_tokens":1}');
const start = body.indexOf('[');
const end = body.lastIndexOf(']') + 1;

function runs(name: string, fn: () => unknown): void {
  const us: number[] = [];
  for (let r = 0; r < 7; r++) {
    const n = 20_000;
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) fn();
    const d = process.cpuUsage(t0);
    us.push((d.user + d.system) / n);
  }
  us.sort((a, b) => a - b);
  console.log(`${name}: ${us.map((x) => x.toFixed(2)).join(' ')} µs per call, median ${us[3]!.toFixed(2)}`);
}

runs('render + encode', () => model.encodeChat(body, start, end, -1, -1, true, null));
runs('render only', () => model.renderChat(body, start, end, -1, -1, true, null));
