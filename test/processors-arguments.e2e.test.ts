// What a custom chat processor's provider is given (spec 002: "the parsed Frontend
// configuration and the --dyn-chat-processor-config JSON object"), through a real
// `portico serve` and the openai client: a processor written from the spec's example,
// `provider(config, options)`, reads its settings from `options` and sees the frontend's
// resolved configuration in `config`, with no secret in it from the command line, the
// environment or the --config file.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startPortico, QWEN3, ROOT } from './helpers/portico.js';
import { eventually } from './helpers/eventually.js';

const SPEC_EXAMPLE = `${ROOT}test/fixtures/processors/spec-example.mjs:provider`;
const SECRETS = { api: 'sk-cmdline-0123456789', admin: 'admin-env-0123456789', metrics: 'metrics-file-0123456789' };

/** The processor's answer to one chat request: what its provider was given. */
async function given(openai: OpenAI): Promise<{ raw: string; options: Record<string, unknown>; config: Record<string, unknown> }> {
  let raw = '';
  await eventually(async () => {
    try {
      raw = (await openai.chat.completions.create({ model: 'spec-model', messages: [{ role: 'user', content: 'hi' }] })).choices[0]!.message.content ?? '';
      return true;
    } catch (e) {
      if (e instanceof OpenAI.APIError && e.status === 503) return false; // model_not_ready until the factory ran
      throw e;
    }
  }, 'the processor serves the model');
  return { raw, ...(JSON.parse(raw) as { options: Record<string, unknown>; config: Record<string, unknown> }) };
}

test('provider(config, options): options is --chat-processor-config, config is the frontend configuration without secrets', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'portico-processor-args-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = join(dir, 'portico.json');
  writeFileSync(configFile, JSON.stringify({ 'metrics-api-key': SECRETS.metrics, 'router-mode': 'least-loaded' }));
  const s = await startPortico(
    ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'spec-model', '--mock', 'echo', '--mock-workers', '1',
      '--api-key', SECRETS.api, '--config', configFile,
      '--chat-processor', SPEC_EXAMPLE, '--chat-processor-config', '{"render_workers": 8}'],
    { PORTICO_ADMIN_API_KEY: SECRETS.admin },
  );
  t.after(() => s.stop());
  const openai = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: SECRETS.api, maxRetries: 0 });
  const { raw, options, config } = await given(openai);

  assert.deepEqual(options, { render_workers: 8 }, 'the engine reads its settings from the second argument');
  // The first: the frontend's configuration as it resolved, by flag name.
  assert.equal(config['model-name'], 'spec-model');
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config['http-port'], 0, 'as given');
  assert.equal(config['router-mode'], 'least-loaded', 'from the --config file');
  assert.equal(config['chat-processor'], SPEC_EXAMPLE);
  assert.equal(config['max-body-bytes'], 45 * 1024 * 1024, 'defaults included');
  assert.equal(config['chat-processor-config'], undefined, 'the second argument is not repeated in the first');
  // No secret, from any source.
  for (const key of ['api-key', 'admin-api-key', 'metrics-api-key']) assert.ok(!(key in config), `${key} is left out`);
  for (const secret of Object.values(SECRETS)) assert.ok(!JSON.stringify(config).includes(secret) && !raw.includes(secret), `${secret} appears nowhere`);
});
