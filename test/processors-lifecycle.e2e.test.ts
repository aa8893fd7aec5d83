// How a custom chat processor is found and kept (spec 002), through the real `portico`
// command: an installed package's registered name (the example package in examples/,
// installed into a temporary node_modules the way npm lays it out), unknown names and bad
// config failing at argument parsing with the registered names listed, Dynamo's
// DYN_CHAT_PROCESSOR and DYN_HTTP_PRE_COMMIT_ERROR_PEEK_MS, Portico's own PORTICO_CHAT_PROCESSOR,
// the factory retried with backoff until it succeeds, and rebuilt when a worker registers
// with another card. A TypeScript processor type-checks against the public types (and a
// mistyped one does not) with `tsc --noEmit` in the project where portico is installed.

import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startPortico, runPortico, QWEN3, ROOT, type Proc } from './helpers/portico.js';
import { eventually } from './helpers/eventually.js';

const RULES = `${ROOT}test/fixtures/processors/rules.mjs:provider`;
const EXAMPLE = 'portico-example-passthrough-processor';

/** A project folder with the example processor and portico installed in its node_modules. */
let project: string;

before(() => {
  project = mkdtempSync(join(tmpdir(), 'portico-processor-'));
  mkdirSync(join(project, 'node_modules'));
  cpSync(join(ROOT, 'examples/passthrough-processor'), join(project, 'node_modules', EXAMPLE), { recursive: true });
  // The example imports 'portico' (its peer dependency): the repository, linked as npm links a local package.
  symlinkSync(ROOT, join(project, 'node_modules', 'portico'), 'dir');
});

after(() => {
  rmSync(project, { recursive: true, force: true });
});

const serveArgs = ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm'];

describe('argument parsing', () => {
  test('an unknown name fails before serving, listing the registered processors', async () => {
    const r = await runPortico([...serveArgs, '--mock', 'echo', '--chat-processor', 'no-such-processor'], {}, project);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown chat processor 'no-such-processor'/);
    assert.match(r.stderr, /Registered chat processors: portico, example-passthrough/);
  });

  test('a module path that is not there, or has no such export, fails too', async () => {
    const missing = await runPortico([...serveArgs, '--mock', 'echo', '--chat-processor', './nowhere.mjs:provider']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no such module file/);
    const noExport = await runPortico([...serveArgs, '--mock', 'echo', '--chat-processor', `${ROOT}test/fixtures/processors/rules.mjs:nothing`]);
    assert.equal(noExport.code, 2);
    assert.match(noExport.stderr, /has no exported function `nothing`/);
  });

  test('--chat-processor-config must be a JSON object', async () => {
    for (const bad of ['{not json', '[1,2]', '3']) {
      const r = await runPortico([...serveArgs, '--mock', 'echo', '--chat-processor', RULES, '--chat-processor-config', bad]);
      assert.equal(r.code, 2, bad);
      assert.match(r.stderr, /--chat-processor-config must be a JSON object/);
    }
  });

  test('PORTICO_CHAT_PROCESSOR names the processor, as --chat-processor does: an unknown name fails the same way', async () => {
    const r = await runPortico([...serveArgs, '--mock', 'echo'], { PORTICO_CHAT_PROCESSOR: 'no-such-processor' }, project);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown chat processor 'no-such-processor'/);
    assert.match(r.stderr, /Registered chat processors: portico, example-passthrough/);
  });

  test('the help lists the flags', async () => {
    const r = await runPortico(['serve', '--help']);
    assert.match(r.stdout, /--chat-processor NAME/);
    assert.match(r.stdout, /--chat-processor-config JSON/);
    assert.match(r.stdout, /--chat-template FILE/);
  });
});

describe('an installed package registers a name', () => {
  let server: Proc;
  /** `--chat-processor portico`: the native path. */
  let native: Proc;
  before(async () => {
    [server, native] = await Promise.all([
      startPortico([...serveArgs, '--mock', 'echo', '--mock-workers', '1', '--chat-processor', 'example-passthrough', '--chat-processor-config', '{"max_tokens_limit": 1000}'], {}, project),
      startPortico([...serveArgs, '--mock', 'echo', '--mock-workers', '1', '--chat-processor', 'portico']),
    ]);
  });
  after(async () => {
    await server?.stop();
    await native?.stop();
  });

  test('the example processor serves chat, Responses and Messages, with its config', async () => {
    const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'x', maxRetries: 0 });
    const r = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 5 });
    assert.ok(r.choices[0]!.message.content!.length > 0);
    assert.equal(r.choices[0]!.finish_reason, 'length');
    assert.ok(r.usage!.prompt_tokens > 0);
    await assert.rejects(openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5000 }), (e: any) => e.status === 400 && /above this server's limit of 1000/.test(e.message));
    const resp = await openai.responses.create({ model: 'm', input: 'hello there', max_output_tokens: 4 });
    assert.ok(resp.output_text.length > 0);
    const anthropic = new Anthropic({ baseURL: server.url, apiKey: 'x', maxRetries: 0 });
    const m = await anthropic.messages.create({ model: 'm', max_tokens: 4, messages: [{ role: 'user', content: 'hello there' }] });
    assert.equal(m.stop_reason, 'max_tokens');
    assert.ok((m.content[0] as { text: string }).text.length > 0);
  });

  test("it answers what the native path ('portico') answers: same template, same echo engine", async () => {
    {
      // The echo engine sends the prompt back, EOS (<|im_end|>) included: both stop there.
      const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'the same words' }], max_tokens: 200 });
      const ask = async (url: string) => ((await (await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json()) as any).choices[0].message.content;
      const [mine, theirs] = [await ask(server.url), await ask(native.url)];
      assert.equal(mine, theirs);
      assert.match(mine, /the same words$/);
    }
  });
});

describe('PORTICO_CHAT_PROCESSOR', () => {
  let server: Proc;
  before(async () => {
    server = await startPortico([...serveArgs, '--mock', 'echo', '--mock-workers', '1'], { PORTICO_CHAT_PROCESSOR: RULES, PORTICO_CHAT_PROCESSOR_CONFIG: '{"from": "env"}' });
  });
  after(async () => {
    await server?.stop();
  });

  test('selects the processor (and PORTICO_CHAT_PROCESSOR_CONFIG its config): the processor answers chat', async () => {
    const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'x', maxRetries: 0 });
    let content: string | null = null;
    await eventually(async () => {
      try {
        content = (await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'card' }] })).choices[0]!.message.content;
        return true;
      } catch (e) {
        if (e instanceof OpenAI.APIError && e.status === 503) return false; // model_not_ready until the factory ran
        throw e;
      }
    }, 'the processor serves the model');
    const card = JSON.parse(content!) as { config: Record<string, unknown>; options: unknown };
    assert.equal(card.config['chat-processor'], RULES);
    assert.deepEqual(card.options, { from: 'env' });
    const r = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'raise:invalid' }] }).catch((e: unknown) => e);
    assert.ok(r instanceof OpenAI.BadRequestError && /refused by the processor/.test(r.message), 'the processor\'s own error');
  });
});

describe('TypeScript processors type-check against the public types', () => {
  const FIXTURES = `${ROOT}test/fixtures/typed-processor`;
  /** `tsc --noEmit` of one fixture in the project where portico is installed (node_modules/portico). */
  function typecheck(file: string): { status: number | null; out: string } {
    const dir = mkdtempSync(join(project, 'ts-'));
    cpSync(join(FIXTURES, file), join(dir, file));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, types: ['node'], typeRoots: [join(ROOT, 'node_modules/@types')] },
      files: [file],
    }));
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8', cwd: dir });
    return { status: r.status, out: r.stdout + r.stderr };
  }

  test("a processor written in TypeScript, importing from 'portico', compiles with tsc --noEmit (types from package.json exports)", () => {
    const r = typecheck('processor.mts');
    assert.equal(r.status, 0, r.out);
  });

  test('a mistyped processor is rejected at the lines that break the contract', () => {
    const r = typecheck('mistyped.mts');
    assert.notEqual(r.status, 0);
    assert.match(r.out, /mistyped\.mts\(9,\d+\): error TS2322: Type 'string' is not assignable to type '.*readonly number\[\]'/, r.out);
    assert.match(r.out, /mistyped\.mts\(10,\d+\): error TS2322: Type '"user"' is not assignable to type '"assistant"'/, r.out);
    assert.ok(!/Cannot find module 'portico'/.test(r.out), r.out);
  });
});

describe('the factory: retried with backoff, rebuilt on a card change', () => {
  let server: Proc;
  let second: Proc | undefined;
  before(async () => {
    // Dynamo's environment names: DYN_CHAT_PROCESSOR names the processor.
    server = await startPortico([...serveArgs, '--mock', 'echo', '--mock-workers', '1', '--chat-processor-config', '{"failTimes": 2}'], { DYN_CHAT_PROCESSOR: RULES, DYN_HTTP_PRE_COMMIT_ERROR_PEEK_MS: '30000' });
  });
  after(async () => {
    await server?.stop();
    await second?.stop();
  });

  const card = async (): Promise<Record<string, any> | null> => {
    const r = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'card' }] }) });
    if (r.status === 503) {
      assert.equal(((await r.json()) as any).error.code, 'model_not_ready');
      assert.ok(r.headers.get('retry-after'));
      return null;
    }
    assert.equal(r.status, 200);
    return JSON.parse(((await r.json()) as any).choices[0].message.content) as Record<string, any>;
  };

  test('a factory that throws is retried with backoff; the model is served once it succeeds', async () => {
    let v: Record<string, any> | null = null;
    await eventually(async () => (v = await card()) !== null, 'the processor serves the model');
    assert.equal(v!.built, 3, 'two failures, then the third call succeeded');
    const out = server.output();
    assert.match(out, /factory for model m failed \(attempt 1\); retrying in 250 ms/);
    assert.match(out, /factory for model m failed \(attempt 2\); retrying in 500 ms/);
    assert.match(out, /factory failure 2 on purpose/);
  });

  test('the pre-commit peek set by DYN_HTTP_PRE_COMMIT_ERROR_PEEK_MS lets a stream carry headers', async () => {
    const r = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'header:x-dyn=1' }], stream: true }) });
    assert.equal(r.headers.get('x-dyn'), '1');
    assert.match(await r.text(), /set=true/);
  });

  test('a worker registering with another card rebuilds the engine for it', async () => {
    const before = (await card())!;
    second = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', '--max-model-len', '4321']);
    const add = await fetch(`${server.url}/admin/workers`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: `grpc://127.0.0.1:${second.port}` }) });
    assert.equal(add.status, 201);
    const id = ((await add.json()) as any).worker.id as number;
    let v: Record<string, any> | null = null;
    await eventually(async () => (v = await card())!.built > before.built, 'the factory ran for the new card');
    assert.equal(v!.built, before.built + 1);
    assert.equal(v!.instanceId, id, 'the worker that brought the card');
    assert.equal(v!.runtime.maxContextLength, 4321);
    assert.notEqual(before.runtime.maxContextLength, 4321);
    // The same card again (the worker leaves and the first one is the newest again) rebuilds back.
    const del = await fetch(`${server.url}/admin/workers/${id}`, { method: 'DELETE' });
    assert.equal(del.status, 200);
    await eventually(async () => (v = await card())!.built > before.built + 1, 'rebuilt for the first worker\'s card');
    assert.equal(v!.runtime.maxContextLength, before.runtime.maxContextLength);
  });
});
