// What a `data:` image URL costs the event loop: decoded by Node on the loop (Buffer.from(…,
// 'base64') and the length check that catches bytes Node's decoder skips), against handed to
// the native decoder on libuv's pool (src/native/vision.ts nativeDecodeDataUrl: the loop pays
// the string's copy into Rust, the pool the decode). The URL is built as the Anthropic face
// builds it, `data:${media_type};base64,${data}`, from a JSON-parsed string.
//   npm run build:ts && node dist/bench/data-url.bench.js [MB=1] [ROUNDS=200]
import { randomBytes } from 'node:crypto';

import { nativeDecodeDataUrl } from '../src/native/vision.js';

const mb = Number(process.argv[2] ?? 1);
const rounds = Number(process.argv[3] ?? 200);
const data = (JSON.parse(JSON.stringify({ data: randomBytes(Math.round(mb * (1 << 20))).toString('base64') })) as { data: string }).data;
const urlOf = () => `data:image/png;base64,${data}`;

function nodeOnLoop(url: string): Buffer {
  const comma = url.indexOf(',');
  const n = url.length - comma - 1;
  const pad = url.endsWith('==') ? 2 : url.endsWith('=') ? 1 : 0;
  const bytes = Buffer.from(url.slice(comma + 1), 'base64');
  if (n % 4 === 1 || bytes.length !== Math.floor(((n - pad) * 3) / 4)) throw new Error('not valid base64');
  return bytes;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const loopNode: number[] = [];
const loopNative: number[] = [];
const totalNative: number[] = [];
for (let r = 0; r < rounds; r++) {
  let url = urlOf();
  let t = performance.now();
  nodeOnLoop(url);
  loopNode.push(performance.now() - t);
  url = urlOf();
  t = performance.now();
  const p = nativeDecodeDataUrl(url, 64 << 20);
  loopNative.push(performance.now() - t);
  await p;
  totalNative.push(performance.now() - t);
}
console.log(`${mb} MB image, ${rounds} rounds, median ms on the event loop: Node's decode ${median(loopNode).toFixed(3)}, native (the copy) ${median(loopNative).toFixed(3)}; native until decoded ${median(totalNative).toFixed(3)}`);
