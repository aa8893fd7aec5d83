// The command line is a contract: help lists every flag, and bad invocations fail
// with a clear message and a non-zero exit.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPortico, QWEN3 } from './helpers/portico.js';

test('portico --help names both commands', async () => {
  const r = await runPortico(['--help']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /portico serve/);
  assert.match(r.stdout, /portico mock-engine/);
});

test('portico serve --help describes every flag', async () => {
  const r = await runPortico(['serve', '--help']);
  assert.equal(r.code, 0);
  for (const flag of ['--http-port', '--host', '--model-path', '--model-name', '--worker', '--mock', '--mock-workers', '--max-body-bytes', '--tool-call-parser', '--reasoning-parser']) {
    assert.ok(r.stdout.includes(flag), `help mentions ${flag}`);
  }
});

test('portico mock-engine --help describes every flag', async () => {
  const r = await runPortico(['mock-engine', '--help']);
  assert.equal(r.code, 0);
  for (const flag of ['--port', '--host', '--model-path', '--mode', '--step-ms', '--prefill-ms-per-token']) {
    assert.ok(r.stdout.includes(flag), `help mentions ${flag}`);
  }
});

test('an unknown flag is a usage error', async () => {
  const r = await runPortico(['serve', '--no-such-flag']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /no-such-flag/);
});

test('an unknown command is a usage error', async () => {
  const r = await runPortico(['frobnicate']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown command 'frobnicate'/);
});

test('serve without workers says how to give some', async () => {
  const r = await runPortico(['serve', '--model-path', QWEN3, '--http-port', '0']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--worker grpc:\/\/HOST:PORT/);
});

test('a folder that is not a model is a clear startup error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'portico-not-a-model-'));
  const r = await runPortico(['serve', '--model-path', dir, '--mock', 'echo', '--http-port', '0']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /tokenizer\.json/);
  assert.ok(r.stderr.includes(dir), 'the error names the folder');
});

test('an unknown parser name is a startup error', async () => {
  const r = await runPortico(['serve', '--model-path', QWEN3, '--mock', 'echo', '--http-port', '0', '--tool-call-parser', 'nonesuch']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--tool-call-parser: unknown parser `nonesuch`/);
});

test('--mock takes only echo or sim', async () => {
  const r = await runPortico(['serve', '--model-path', QWEN3, '--mock', 'gpu']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /'echo' or 'sim'/);
});
