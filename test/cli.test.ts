// The command line is a contract: help lists every flag, and bad invocations fail
// with a clear message and a non-zero exit.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPortico, startPortico, QWEN3 } from './helpers/portico.js';

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
  assert.match(r.stderr, /--mock must be one of 'echo', 'sim', got 'gpu'/);
});

test('serve --help names the environment variable of every flag', async () => {
  const r = await runPortico(['serve', '--help']);
  for (const env of ['PORTICO_HTTP_PORT', 'PORTICO_MODEL_PATH', 'PORTICO_API_KEY', 'PORTICO_MAX_CONCURRENT_REQUESTS', 'PORTICO_CONFIG']) {
    assert.ok(r.stdout.includes(env), `help mentions ${env}`);
  }
});

test('options come from PORTICO_* variables and from a --config file, flags first', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'portico-config-'));
  const config = join(dir, 'portico.json');
  writeFileSync(config, JSON.stringify({ 'model-path': QWEN3, mock: 'echo', 'mock-workers': 1, 'model-name': 'from-config', host: '127.0.0.1' }));
  const a = await startPortico(['serve', '--config', config], { PORTICO_HTTP_PORT: '0' });
  try {
    const models = (await (await fetch(`${a.url}/v1/models`)).json()) as { data: { id: string }[] };
    assert.deepEqual(models.data.map((m) => m.id), ['from-config']);
  } finally {
    await a.stop();
  }
  const b = await startPortico(['serve', '--config', config, '--model-name', 'from-flag'], { PORTICO_HTTP_PORT: '0', PORTICO_MODEL_NAME: 'from-env' });
  try {
    const models = (await (await fetch(`${b.url}/v1/models`)).json()) as { data: { id: string }[] };
    assert.deepEqual(models.data.map((m) => m.id), ['from-flag']);
  } finally {
    await b.stop();
  }
});

test('a config file with an unknown key is a usage error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'portico-config-'));
  const config = join(dir, 'bad.json');
  writeFileSync(config, JSON.stringify({ 'model-path': QWEN3, 'no-such-option': 1 }));
  const r = await runPortico(['serve', '--config', config]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown option 'no-such-option'/);
});

test('a malformed environment value is a usage error naming the variable', async () => {
  const r = await runPortico(['serve', '--model-path', QWEN3, '--mock', 'echo'], { PORTICO_HTTP_PORT: 'eighty' });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /PORTICO_HTTP_PORT must be an integer/);
});
