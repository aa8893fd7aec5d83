// Model.load shares one native model per folder across the process's threads (the shard
// threads each load every served model): what a thread fills in a model's caches serves the
// others, a folder changed on disk is loaded afresh, and a template override is a model of
// its own.

import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';

import { Model } from '../src/native/core.js';
import { QWEN3 } from './helpers/portico.js';

const CORE = new URL('../src/native/core.js', import.meta.url).href;

/** A chat body of one long system prompt (its piece is ≥ 256 B: the prefix cache keeps it) and a user turn. */
const LONG = Buffer.from(JSON.stringify([
  { role: 'system', content: 'You answer in one short sentence and cite no sources. '.repeat(20) },
  { role: 'user', content: 'Hello?' },
]));
const HI = Buffer.from(JSON.stringify([{ role: 'user', content: 'hi' }]));

function render(m: Model, body: Buffer): string {
  return m.renderChat(body, 0, body.length, -1, -1, true, null);
}

test('a folder loaded by a worker thread and by this thread is one model: the prefix cache the worker filled serves this thread', { timeout: 60_000 }, async () => {
  // The worker loads the folder, encodes the long prompt, says so, and holds the model until told to go.
  const w = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     import(workerData.core).then(({ Model }) => {
       const m = Model.load(workerData.dir);
       const b = Buffer.from(workerData.body);
       const ids = m.encodeChat(b, 0, b.length, -1, -1, true, null);
       parentPort.postMessage({ ids: Array.from(ids), entries: m.prefixCacheStats().entries });
       parentPort.once('message', () => process.exit(0));
     });`,
    { eval: true, workerData: { core: CORE, dir: QWEN3, body: LONG.toString() } },
  );
  try {
    await sharedWith(w);
  } finally {
    await w.terminate();
  }
});

async function sharedWith(w: Worker): Promise<void> {
  const exited = new Promise((r) => w.once('exit', r));
  const fromWorker = await new Promise<{ ids: number[]; entries: number }>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  assert.ok(fromWorker.entries > 0, 'the worker cached the long system prompt');
  const m = Model.load(QWEN3);
  const before = m.prefixCacheStats();
  assert.equal(before.entries, fromWorker.entries, 'this thread sees the entries the worker made: one model');
  assert.deepEqual(Array.from(m.encodeChat(LONG, 0, LONG.length, -1, -1, true, null)), fromWorker.ids);
  assert.ok(m.prefixCacheStats().hits > before.hits, 'served from what the worker cached');
  w.postMessage('go');
  await exited;
  // The worker's handle is gone; this thread's still works.
  assert.match(render(m, HI), /<\|im_start\|>user\nhi<\|im_end\|>/);
}

test('a folder changed on disk is loaded afresh; a model loaded before keeps what it read', () => {
  const dir = mkdtempSync(join(tmpdir(), 'portico-shared-model-'));
  try {
    for (const f of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(QWEN3, f), join(dir, f));
    const a = Model.load(dir);
    const original = render(a, HI);
    assert.match(original, /<\|im_start\|>user\nhi<\|im_end\|>/);
    assert.equal(render(Model.load(dir), HI), original, 'the same folder again: the same model');
    const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
    config.chat_template = 'CHANGED {{ messages[0].content }}';
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(config));
    const b = Model.load(dir);
    assert.equal(render(b, HI), 'CHANGED hi', 'the changed folder was read again');
    assert.equal(render(a, HI), original, 'the model loaded before is unchanged');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a chat template override is a model of its own; the folder without it is still the folder\'s', () => {
  const plain = Model.load(QWEN3);
  const over = Model.load(QWEN3, JSON.stringify('OVERRIDE {{ messages[0].content }}'));
  assert.equal(render(over, HI), 'OVERRIDE hi');
  assert.match(render(plain, HI), /<\|im_start\|>user\nhi<\|im_end\|>/);
  assert.match(render(Model.load(QWEN3), HI), /<\|im_start\|>user\nhi<\|im_end\|>/);
  assert.equal(render(Model.load(QWEN3, JSON.stringify('OVERRIDE {{ messages[0].content }}')), HI), 'OVERRIDE hi');
});
