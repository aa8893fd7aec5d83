// Disaggregated prefill/decode through `portico serve`, over `portico mock-engine` pairs of
// both protocols (--role prefill / --role decode): what a client sees on every face (chat
// unary and streamed, KServe, a custom processor's routed engine), the pools in /health,
// /v1/models and /metrics, each side's failures as shaped errors, and a client disconnect
// that ends both legs.

import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { QWEN3, ROOT, startPortico, type Proc } from './helpers/portico.js';
import { eventually } from './helpers/eventually.js';
import { grpcPortOf, inferRequest, kserveClient, text, param } from './helpers/kserve.js';

const RULES = `${ROOT}test/fixtures/processors/rules.mjs:provider`;
const LONG = 'Tell me about disaggregated serving, in detail, with numbers and examples. '.repeat(4);

interface Health {
  status: string;
  models: { serving?: string; pools?: Record<string, { workers: number; healthy: number }> }[];
}

async function mock(protocol: string, role: string, extra: string[] = []): Promise<Proc> {
  return startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', '--faults', '--protocol', protocol, '--mode', 'sim', '--step-ms', '2', '--eos-probability', '0', '--role', role, ...extra]);
}

const urlOf = (protocol: string, p: Proc) => `${protocol === 'vllm' ? 'vllm+grpc' : 'grpc'}://127.0.0.1:${p.port}`;

for (const protocol of ['sglang', 'vllm'] as const) {
  describe(`${protocol} protocol`, () => {
    let prefill: Proc;
    let decode: Proc;
    let fe: Proc;
    let noMigration: Proc;
    let openai: OpenAI;
    const procs: Proc[] = [];

    before(async () => {
      // Short rendezvous bounds: the no_rendezvous case ends in well under a second.
      prefill = await mock(protocol, 'prefill', ['--rendezvous-timeout-ms', '1500']);
      decode = await mock(protocol, 'decode', ['--rendezvous-timeout-ms', '1500']);
      procs.push(prefill, decode);
      const common = ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--prefill-worker', urlOf(protocol, prefill), '--decode-worker', urlOf(protocol, decode), '--worker-breaker-failures', '0', '--worker-breaker-failure-rate', '0', '--disagg-rendezvous-timeout-secs', '20'];
      fe = await startPortico([...common, '--grpc-port', '0']);
      noMigration = await startPortico([...common, '--migration-limit', '0', '--chat-processor', RULES]);
      procs.push(fe, noMigration);
      for (const p of [fe, noMigration]) await eventually(async () => ((await fetch(`${p.url}/health`).then((r) => r.json())) as Health).status === 'healthy', 'the pair is healthy');
      openai = new OpenAI({ baseURL: `${fe.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    });

    after(async () => {
      for (const p of procs.reverse()) await p.stop();
    });

    test('the pools: /health, /v1/models, /admin/workers and /metrics', async () => {
      const h = (await fetch(`${fe.url}/health`).then((r) => r.json())) as Health;
      assert.equal(h.models[0]!.serving, 'disaggregated');
      assert.deepEqual(h.models[0]!.pools, { prefill: { workers: 1, healthy: 1 }, decode: { workers: 1, healthy: 1 } });
      const models = (await fetch(`${fe.url}/v1/models`).then((r) => r.json())) as { data: { serving?: string; pools?: unknown }[] };
      assert.equal(models.data[0]!.serving, 'disaggregated');
      const admin = (await fetch(`${fe.url}/admin/workers`).then((r) => r.json())) as { models: { workers: { role: string }[] }[] };
      assert.deepEqual(admin.models[0]!.workers.map((w) => w.role), ['prefill', 'decode']);
      const m = await fetch(`${fe.url}/metrics`).then((r) => r.text());
      assert.match(m, /worker_role\{model="m",worker="0",role="prefill"\} 1/);
      assert.match(m, /worker_role\{model="m",worker="1",role="decode"\} 1/);
    });

    test('chat, unary and streamed: the answer from decode, the prompt\'s KV from prefill, both workers named', async () => {
      const r = (await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: LONG }], max_tokens: 6, nvext: { extra_fields: ['worker_id'] } } as never)) as OpenAI.ChatCompletion & { nvext: { worker_id: Record<string, number> } };
      assert.equal(r.usage!.completion_tokens, 6);
      assert.equal(r.choices[0]!.finish_reason, 'length');
      assert.ok((r.usage!.prompt_tokens_details?.cached_tokens ?? 0) >= r.usage!.prompt_tokens - 1, 'the decode worker received the prompt\'s KV');
      assert.deepEqual(r.nvext.worker_id, { prefill_worker_id: 0, decode_worker_id: 1 });
      const stream = await openai.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: LONG }], max_tokens: 5, stream: true, stream_options: { include_usage: true } });
      let n = 0;
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const c of stream) {
        if (c.choices[0]?.delta.content) n++;
        usage = c.usage ?? usage;
      }
      assert.ok(n > 0);
      assert.equal(usage?.completion_tokens, 5);
    });

    test('pins: prefill and decode ids (body and headers), wrong roles and unknown ids are 400s naming the field', async () => {
      const ask = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
        fetch(`${fe.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2, ...body }) });
      assert.equal((await ask({ nvext: { prefill_worker_id: 0, decode_worker_id: 1 } })).status, 200);
      assert.equal((await ask({}, { 'x-dynamo-prefill-instance-id': '0', 'x-dynamo-worker-instance-id': '1' })).status, 200);
      for (const [body, headers, field] of [
        [{ nvext: { prefill_worker_id: 1 } }, {}, 'nvext.prefill_worker_id'],
        [{ nvext: { decode_worker_id: 0 } }, {}, 'nvext.decode_worker_id'],
        [{ nvext: { prefill_worker_id: 77 } }, {}, 'nvext.prefill_worker_id'],
        [{}, { 'x-dynamo-prefill-instance-id': '1' }, 'nvext.prefill_worker_id'],
      ] as const) {
        const r = await ask(body, headers);
        assert.equal(r.status, 400, JSON.stringify(body) + JSON.stringify(headers));
        assert.equal(((await r.json()) as { error: { param: string } }).error.param, field);
      }
      const bad = await ask({}, { 'x-dynamo-prefill-instance-id': 'zero' });
      assert.equal(bad.status, 400);
      assert.equal((await ask({})).status, 200, 'the server serves on');
    });

    test('KServe ModelInfer and a custom processor\'s routed engine serve disaggregated too', async () => {
      const port = await grpcPortOf(fe);
      const k = kserveClient(port);
      const r = await k.modelInfer(inferRequest('m', [text('text_input', LONG)], { parameters: { max_tokens: param.int(3) } }));
      assert.ok(r.outputs.length > 0);
      const viaProcessor = await fetch(`${noMigration.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: LONG }], max_tokens: 4 }) });
      assert.equal(viaProcessor.status, 200);
      const body = (await viaProcessor.json()) as { choices: { message: { content: string } }[] };
      assert.ok(body.choices[0]!.message.content.length > 0);
    });

    test('failures: prefill failing, a rendezvous that never comes, decode dying: shaped errors, and the server serves on', async () => {
      const ask = (content: string, stream = false) =>
        fetch(`${noMigration.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', prompt: content, max_tokens: 8, stream }) });
      const prefillDies = await ask(`${LONG} [[fault:internal:prefill]]`);
      assert.ok(prefillDies.status >= 500 && prefillDies.status < 600, String(prefillDies.status));
      assert.equal(((await prefillDies.json()) as { error: { type: string } }).error.type !== undefined, true);
      const never = await ask(`${LONG} [[fault:no_rendezvous]]`);
      assert.ok(never.status >= 500 && never.status < 600, `no rendezvous: ${never.status}`);
      const decodeDies = await ask(`${LONG} [[fault:internal:decode@3]]`, true);
      const sse = await decodeDies.text();
      assert.match(sse, /"error"/, 'the stream ends with an error event');
      const ok = await ask(LONG);
      assert.equal(ok.status, 200);
    });

    test('a client that goes away while decode waits for its KV ends both legs', async () => {
      // Prefill never hands its KV over and decode waits without a bound of its own (it hangs
      // until cancelled), so decode stays in flight until the client leaves, however long the
      // host takes to show it. (vLLM's prefill leg has ended by then: it runs before decode.)
      const ac = new AbortController();
      const pending = fetch(`${noMigration.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', prompt: `${LONG} [[fault:no_rendezvous]] [[fault:hang:decode]] gone`, max_tokens: 8, stream: true }), signal: ac.signal });
      // Decode (worker 1) is waiting once the frontend's own gauge counts it.
      await eventually(async () => {
        const m = await fetch(`${noMigration.url}/metrics`).then((x) => x.text());
        return /worker_active_requests\{model="m",worker="1"\} 1/.test(m);
      }, 'the decode leg in flight');
      ac.abort();
      await pending.then((r) => r.body?.cancel(), () => undefined);
      await eventually(async () => {
        const m = await fetch(`${noMigration.url}/metrics`).then((x) => x.text());
        return /worker_active_requests\{model="m",worker="0"\} 0/.test(m) && /worker_active_requests\{model="m",worker="1"\} 0/.test(m);
      }, 'both legs ended');
    });
  });
}
