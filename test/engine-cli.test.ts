// `portico mock-engine` as a user runs it: every flag documented, the
// simulator reachable over both protocols, bad values refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createEngineClient } from '../src/engine/factory.js';
import { QWEN3, runPortico, startPortico } from './helpers/portico.js';

const FLAGS = [
  '--port', '--host', '--model-path', '--mode', '--step-ms', '--prefill-ms-per-token', '--protocol', '--speedup-ratio',
  '--data-parallel-size', '--block-size', '--num-blocks', '--max-num-seqs', '--max-num-batched-tokens', '--max-model-len',
  '--no-chunked-prefill', '--no-prefix-caching', '--decode-ms-per-seq', '--decode-ms-per-kv-token', '--eos-probability',
  '--seed', '--stream-interval', '--reasoning-tokens', '--reasoning-parser', '--tool-call-parser', '--kv-events-zmq',
  '--kv-events-replay', '--kv-events-topic', '--kv-events-format', '--role', '--bootstrap-port', '--kv-transfer-ms-per-token',
  '--kv-connector', '--rendezvous-timeout-ms',
];

test('portico mock-engine --help describes every flag it accepts', async () => {
  const r = await runPortico(['mock-engine', '--help']);
  assert.equal(r.code, 0);
  for (const flag of FLAGS) assert.ok(r.stdout.includes(flag), `help mentions ${flag}`);
});

test('bad simulator values are usage errors', async () => {
  const a = await runPortico(['mock-engine', '--model-path', QWEN3, '--protocol', 'trt']);
  assert.equal(a.code, 2);
  assert.match(a.stderr, /--protocol must be one of 'sglang', 'vllm'/);
  const b = await runPortico(['mock-engine', '--model-path', QWEN3, '--kv-events-topic', 'x']);
  assert.equal(b.code, 2);
  assert.match(b.stderr, /need --kv-events-zmq/);
  const c = await runPortico(['mock-engine', '--model-path', QWEN3, '--role', 'both']);
  assert.equal(c.code, 2);
  assert.match(c.stderr, /--role must be one of 'aggregated', 'prefill', 'decode'/);
  const d = await runPortico(['mock-engine', '--model-path', QWEN3, '--role', 'decode', '--bootstrap-port', '9000']);
  assert.equal(d.code, 2);
  assert.match(d.stderr, /--bootstrap-port needs --role prefill/);
});

test('mock-engine --role prefill / --role decode (SGLang): a pair started from the command line serves a request together', async () => {
  const common = ['mock-engine', '--model-path', QWEN3, '--port', '0', '--mode', 'sim', '--speedup-ratio', '100', '--eos-probability', '0'];
  const prefill = await startPortico([...common, '--role', 'prefill', '--bootstrap-port', '0', '--kv-transfer-ms-per-token', '0.5']);
  const decode = await startPortico([...common, '--role', 'decode', '--rendezvous-timeout-ms', '60000']);
  const pc = createEngineClient(`grpc://127.0.0.1:${prefill.port}`);
  const dc = createEngineClient(`grpc://127.0.0.1:${decode.port}`);
  try {
    const pd = (await pc.serverInfo()).disaggregation;
    assert.equal(pd.role, 'prefill');
    assert.ok(pd.bootstrapPort! > 0);
    assert.equal((await pc.serverInfo()).serverArgs['kv_transfer_ms_per_token'], 0.5);
    assert.equal((await dc.serverInfo()).disaggregation.role, 'decode');
    const p = { requestId: 'cli-pd-1', inputIds: Uint32Array.from({ length: 40 }, (_, i) => 100 + i), maxNewTokens: 6, stream: true, bootstrap: { host: '127.0.0.1', port: pd.bootstrapPort!, room: 77 } };
    const run = async (c: typeof pc) => {
      const out: { tokens: number; cached: number; finish: string } = { tokens: 0, cached: -1, finish: '' };
      for await (const ev of c.generate({ ...p }, new AbortController().signal)) {
        if (ev.kind === 'chunk') out.tokens += ev.chunk.tokenIds.length;
        else {
          out.cached = ev.done.cachedTokens;
          out.finish = ev.done.finishReason;
        }
      }
      return out;
    };
    const [pre, dec] = await Promise.all([run(pc), run(dc)]);
    assert.deepEqual(pre, { tokens: 1, cached: 0, finish: 'length' });
    assert.deepEqual(dec, { tokens: 6, cached: 39, finish: 'length' });
    assert.match(prefill.output(), /bootstrap server \(prefill role\) on 127\.0\.0\.1:\d+/);
  } finally {
    pc.close();
    dc.close();
    await prefill.stop();
    await decode.stop();
  }
});

test('mock-engine --mode sim --protocol vllm: reasoning output, block size and DP size reported', async () => {
  const p = await startPortico([
    'mock-engine', '--model-path', QWEN3, '--port', '0', '--mode', 'sim', '--protocol', 'vllm', '--speedup-ratio', '100',
    '--reasoning-tokens', '3', '--block-size', '32', '--data-parallel-size', '2', '--eos-probability', '0',
  ]);
  const client = createEngineClient(`vllm+grpc://127.0.0.1:${p.port}`);
  try {
    assert.match(p.output(), /listening on vllm\+grpc:\/\//);
    const si = await client.serverInfo();
    assert.equal(si.serverArgs['block_size'], 32);
    assert.equal(si.serverArgs['data_parallel_size'], 2);
    const ids: number[] = [];
    for await (const ev of client.generate({ requestId: 'c1', inputIds: Uint32Array.from([1, 2, 3]), maxNewTokens: 8, stream: true }, new AbortController().signal)) {
      if (ev.kind === 'chunk') ids.push(...ev.chunk.tokenIds);
    }
    assert.equal(ids.length, 8);
    assert.equal(ids[0], 151667, '<think>');
    assert.equal(ids[4], 151668, '</think>');
    assert.equal((await client.loads()).perRank.length, 2);
  } finally {
    client.close();
    await p.stop();
  }
});

test('portico serve --worker vllm+grpc://… streams from a vLLM-protocol worker sending 3 tokens per message', async () => {
  const engine = await startPortico([
    'mock-engine', '--model-path', QWEN3, '--port', '0', '--mode', 'sim', '--protocol', 'vllm', '--speedup-ratio', '10',
    '--eos-probability', '0', '--stream-interval', '3',
  ]);
  const server = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--worker', `vllm+grpc://127.0.0.1:${engine.port}`]);
  try {
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await fetch(`${server.url}/health`)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 200);
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'models', messages: [{ role: 'user', content: 'hi' }], max_tokens: 7, stream: true, stream_options: { include_usage: true } }),
    });
    assert.equal(res.status, 200);
    const events = (await res.text()).split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as { usage?: { completion_tokens: number }; choices: Array<{ finish_reason: string | null }> });
    assert.equal(events.at(-1)!.usage!.completion_tokens, 7);
    assert.ok(events.some((e) => e.choices[0]?.finish_reason === 'length'));
  } finally {
    await server.stop();
    await engine.stop();
  }
});
