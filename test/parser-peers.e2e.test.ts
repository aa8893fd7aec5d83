// The parser cases taken from vLLM's and SGLang's own tests (test/fixtures/parser-peers/,
// format in its README) through Portico's HTTP API: one echo-engine server per parser
// pair, the case's text sent as the model's output (nvext.use_raw_prompt), read unary and
// streamed with the real `openai` client. Both must give the case's `expect`, and so
// agree with each other. Cases that need the template's PRE.3/PRE.2 state (their
// `request` sets it) run in the native suite only: a raw prompt has no template.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { startPortico, ROOT, QWEN3, type Proc } from './helpers/portico.js';

interface Case {
  name: string;
  tool_parser: string | null;
  reasoning_parser: string | null;
  tools?: OpenAI.ChatCompletionTool[];
  request?: { tool_choice?: string; reasoning_effort?: string; prompt_injected_reasoning?: boolean; prompt_closed_reasoning?: boolean; reasoning_disabled?: boolean };
  text: string;
  expect: { content?: string; reasoning?: string; calls?: { name: string; arguments?: unknown; arguments_text?: string }[] };
}

const DIR = `${ROOT}test/fixtures/parser-peers`;
const cases: Case[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .flatMap((f) => (JSON.parse(readFileSync(`${DIR}/${f}`, 'utf8')) as { cases: Case[] }).cases);

const templateState = (c: Case) => Boolean(c.request?.prompt_injected_reasoning || c.request?.prompt_closed_reasoning || c.request?.reasoning_disabled);

function toolsOf(c: Case): OpenAI.ChatCompletionTool[] | undefined {
  if (c.tools) return c.tools;
  const names = [...new Set((c.expect.calls ?? []).map((x) => x.name))];
  return names.length ? names.map((name) => ({ type: 'function' as const, function: { name, parameters: { type: 'object' } } })) : undefined;
}

interface Result {
  content: string;
  reasoning: string;
  calls: { name: string; arguments: string }[];
}

function expectResult(c: Case, got: Result, how: string): void {
  assert.equal(got.content, c.expect.content ?? '', `${c.name} (${how}): content`);
  assert.equal(got.reasoning, c.expect.reasoning ?? '', `${c.name} (${how}): reasoning`);
  const want = c.expect.calls ?? [];
  assert.equal(got.calls.length, want.length, `${c.name} (${how}): calls ${JSON.stringify(got.calls)}`);
  want.forEach((w, i) => {
    assert.equal(got.calls[i]!.name, w.name, `${c.name} (${how}): name of call ${i}`);
    if (w.arguments_text !== undefined) assert.equal(got.calls[i]!.arguments, w.arguments_text, `${c.name} (${how}): arguments of call ${i}`);
    else assert.deepEqual(JSON.parse(got.calls[i]!.arguments), w.arguments, `${c.name} (${how}): arguments of call ${i}`);
  });
}

function params(c: Case): Record<string, unknown> {
  const tools = toolsOf(c);
  return {
    model: 'm',
    messages: [{ role: 'user', content: c.text }],
    ...(tools ? { tools } : {}),
    ...(c.request?.tool_choice ? { tool_choice: c.request.tool_choice } : {}),
    ...(c.request?.reasoning_effort ? { reasoning_effort: c.request.reasoning_effort } : {}),
    nvext: { use_raw_prompt: true },
    ignore_eos: true,
  };
}

async function unary(client: OpenAI, c: Case): Promise<Result> {
  const r = await client.chat.completions.create(params(c) as never as OpenAI.ChatCompletionCreateParamsNonStreaming);
  const m = r.choices[0]!.message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
  return {
    content: m.content ?? '',
    reasoning: m.reasoning_content ?? '',
    calls: (m.tool_calls ?? []).map((t) => ({ name: (t as OpenAI.ChatCompletionMessageFunctionToolCall).function.name, arguments: (t as OpenAI.ChatCompletionMessageFunctionToolCall).function.arguments })),
  };
}

async function streamed(client: OpenAI, c: Case): Promise<Result> {
  const s = await client.chat.completions.create({ ...params(c), stream: true } as never as OpenAI.ChatCompletionCreateParamsStreaming);
  const out: Result = { content: '', reasoning: '', calls: [] };
  for await (const chunk of s) {
    const d = chunk.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string }) | undefined;
    if (!d) continue;
    out.content += d.content ?? '';
    out.reasoning += d.reasoning_content ?? '';
    for (const t of d.tool_calls ?? []) {
      const call = (out.calls[t.index] ??= { name: '', arguments: '' });
      call.name += t.function?.name ?? '';
      call.arguments += t.function?.arguments ?? '';
    }
  }
  return out;
}

const groups = new Map<string, Case[]>();
for (const c of cases) {
  const key = `${c.tool_parser ?? '-'}|${c.reasoning_parser ?? '-'}`;
  groups.set(key, [...(groups.get(key) ?? []), c]);
}

for (const [key, group] of groups) {
  const [tool, reasoning] = key.split('|');
  describe(`parsers ${key}`, () => {
    let server: Proc;
    let client: OpenAI;
    before(async () => {
      server = await startPortico([
        'serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1',
        ...(tool !== '-' ? ['--tool-call-parser', tool!] : []),
        ...(reasoning !== '-' ? ['--reasoning-parser', reasoning!] : []),
      ]);
      client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    });
    after(() => server?.stop());
    for (const c of group) {
      test(c.name, { skip: templateState(c) ? 'needs the template\'s reasoning state (native suite only)' : false }, async () => {
        expectResult(c, await unary(client, c), 'unary');
        expectResult(c, await streamed(client, c), 'streamed');
      });
    }
  });
}
