// nvext.extra_fields on /v1/completions (spec 001 puts stop_reason under nvext because the
// completions schema has no place for it), and the indexed per-choice shapes for n > 1 on
// completions and chat, through a real `portico serve` (echo mock engine: the answer is the
// prompt) with the real `openai` client, unary and streamed. engine_data / routed_experts,
// which no engine protocol can give, are 400 unsupported_parameter, and the server goes on.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { QWEN3 } from './helpers/portico.js';
import { useServer } from './helpers/use-server.js';
import { Model } from '../src/native/core.js';

const MODEL = 'qwen3';
const tok = Model.load(QWEN3);
const served = useServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', MODEL, '--mock', 'echo', '--mock-workers', '3'], (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 }));

type WithNvext<T> = T & { nvext?: Record<string, any> };

async function complete(body: Record<string, unknown>): Promise<WithNvext<OpenAI.Completion>> {
  return (await served.client.completions.create({ model: MODEL, max_tokens: 32, ...body } as OpenAI.CompletionCreateParamsNonStreaming)) as WithNvext<OpenAI.Completion>;
}

/** The streamed chunks; the one carrying nvext is returned apart. */
async function completeStreamed(body: Record<string, unknown>): Promise<{ text: string[]; nvext: Record<string, any> | undefined; nvextChunks: number }> {
  const stream = await served.client.completions.create({ model: MODEL, max_tokens: 32, stream: true, ...body } as OpenAI.CompletionCreateParamsStreaming);
  const text: string[] = [];
  let nvext: Record<string, any> | undefined;
  let nvextChunks = 0;
  for await (const c of stream as AsyncIterable<WithNvext<OpenAI.Completion>>) {
    for (const ch of c.choices) text[ch.index] = (text[ch.index] ?? '') + ch.text;
    if (c.nvext) {
      nvextChunks++;
      nvext = c.nvext;
      assert.deepEqual(c.choices, [], 'the nvext chunk has no choices');
    }
  }
  return { text, nvext, nvextChunks };
}

const PROMPT = 'hello world STOP after';

test('completions: extra_fields gives stop_reason, worker_id, timing and completion_token_ids (unary)', async () => {
  const r = await complete({ prompt: PROMPT, stop: [' STOP'], nvext: { extra_fields: ['stop_reason', 'worker_id', 'timing', 'completion_token_ids'] } });
  assert.equal(r.choices[0]!.text, 'hello world');
  const nv = r.nvext!;
  assert.equal(nv.stop_reason, ' STOP');
  assert.ok(Number.isInteger(nv.worker_id.decode_worker_id));
  assert.equal(nv.timing.prompt_tokens, r.usage!.prompt_tokens);
  assert.equal(nv.timing.completion_tokens, r.usage!.completion_tokens);
  assert.ok(nv.timing.total_ms >= nv.timing.ttft_ms && nv.timing.ttft_ms >= 0);
  assert.deepEqual(tok.decode(Uint32Array.from(nv.completion_token_ids), false).startsWith('hello world'), true);
});

test('completions: streamed, the nvext comes in one chunk before [DONE]', async () => {
  const s = await completeStreamed({ prompt: PROMPT, stop: [' STOP'], nvext: { extra_fields: ['stop_reason', 'worker_id'] } });
  assert.equal(s.text[0], 'hello world');
  assert.equal(s.nvextChunks, 1);
  assert.equal(s.nvext!.stop_reason, ' STOP');
  assert.ok(Number.isInteger(s.nvext!.worker_id.decode_worker_id));
});

test('completions: without extra_fields there is no nvext', async () => {
  assert.equal((await complete({ prompt: PROMPT })).nvext, undefined);
  assert.equal((await completeStreamed({ prompt: PROMPT })).nvextChunks, 0);
});

test('completions: stop_reason is null for EOS/length and a token id for a stop token', async () => {
  const len = await complete({ prompt: PROMPT, max_tokens: 2, nvext: { extra_fields: ['stop_reason'] } });
  assert.equal(len.choices[0]!.finish_reason, 'length');
  assert.equal(len.nvext!.stop_reason, null);
  const id = tok.encode(' STOP', false)[0]!;
  const byId = await complete({ prompt: PROMPT, stop_token_ids: [id], nvext: { extra_fields: ['stop_reason'] } });
  assert.equal(byId.nvext!.stop_reason, id);
});

test('completions n > 1: stop_reason and completion_token_ids are indexed lists, unary and streamed', async () => {
  const body = { prompt: PROMPT, n: 2, temperature: 1, stop: [' STOP'], nvext: { extra_fields: ['stop_reason', 'completion_token_ids'] } };
  const r = await complete(body);
  assert.deepEqual(r.nvext!.stop_reason, [{ index: 0, stop_reason: ' STOP' }, { index: 1, stop_reason: ' STOP' }]);
  assert.deepEqual(r.nvext!.completion_token_ids.map((c: any) => c.index), [0, 1]);
  assert.ok(r.nvext!.completion_token_ids.every((c: any) => Array.isArray(c.token_ids)));
  const s = await completeStreamed(body);
  assert.deepEqual(s.nvext!.stop_reason, [{ index: 0, stop_reason: ' STOP' }, { index: 1, stop_reason: ' STOP' }]);
});

test('completions with several prompts: choices are indexed prompt-major, worker_id is one entry per prompt', async () => {
  const body = { prompt: ['one STOP x', 'two words'], max_tokens: 8, stop: [' STOP'], nvext: { extra_fields: ['stop_reason', 'worker_id'] } };
  const r = await complete(body);
  assert.deepEqual(r.nvext!.stop_reason, [{ index: 0, stop_reason: ' STOP' }, { index: 1, stop_reason: null }]);
  assert.deepEqual(r.nvext!.worker_id.map((w: any) => w.prompt_index), [0, 1]);
  assert.ok(r.nvext!.worker_id.every((w: any) => Number.isInteger(w.decode_worker_id)));
  const s = await completeStreamed(body);
  assert.deepEqual(s.nvext!.stop_reason, [{ index: 0, stop_reason: ' STOP' }, { index: 1, stop_reason: null }]);
});

test('completions: backend_instance_id routes, and worker_id says so', async () => {
  const r = await complete({ prompt: PROMPT, nvext: { backend_instance_id: 2, extra_fields: ['worker_id'] } });
  assert.equal(r.nvext!.worker_id.decode_worker_id, 2);
});

test('chat n > 1: stop_reason is an indexed list, unary and streamed', async () => {
  const body = { model: MODEL, messages: [{ role: 'user', content: PROMPT }], n: 2, temperature: 1, stop: [' STOP'], nvext: { use_raw_prompt: true, extra_fields: ['stop_reason'] } } as any;
  const r = (await served.client.chat.completions.create(body)) as WithNvext<OpenAI.ChatCompletion>;
  assert.deepEqual(r.nvext!.stop_reason, [{ index: 0, stop_reason: ' STOP' }, { index: 1, stop_reason: ' STOP' }]);
  let nv: any;
  for await (const c of (await served.client.chat.completions.create({ ...body, stream: true })) as any) if (c.nvext) nv = c.nvext;
  assert.deepEqual(nv.stop_reason, [{ index: 0, stop_reason: ' STOP' }, { index: 1, stop_reason: ' STOP' }]);
});

for (const field of ['engine_data', 'routed_experts']) {
  for (const endpoint of ['completions', 'chat'] as const) {
    test(`${endpoint}: extra_fields ${field} is a 400 unsupported_parameter (unary and streamed), and the server goes on`, async () => {
      for (const stream of [false, true]) {
        const nvext = { extra_fields: ['worker_id', field] };
        const call =
          endpoint === 'completions'
            ? served.client.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: 4, stream, nvext } as any)
            : served.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, stream, nvext } as any);
        await assert.rejects(call, (e: any) => {
          assert.equal(e.status, 400);
          assert.equal(e.code, 'unsupported_parameter');
          assert.equal(e.param, 'nvext.extra_fields');
          assert.match(e.message, new RegExp(`"${field}" cannot be served`));
          return true;
        });
      }
      assert.equal((await complete({ prompt: PROMPT, max_tokens: 2 })).choices.length, 1);
    });
  }
}

test('an unknown extra field stays an invalid request (code null) naming the known ones', async () => {
  await assert.rejects(complete({ prompt: PROMPT, nvext: { extra_fields: ['nope'] } }), (e: any) => e.status === 400 && e.code === null && /unknown field "nope" \(known: worker_id, timing, stop_reason, completion_token_ids\)/.test(e.message));
});
