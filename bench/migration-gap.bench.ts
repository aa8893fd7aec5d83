// The client-visible gap at a migration, in the simulator: two sim mock engines (decode step
// --step-ms, default 20 ms) behind `portico serve`; a streamed chat of 120 tokens; after 30
// content events the engine serving it is killed (its connections dropped, as a crashed
// process's). Measured from the client: the gap between the last content event before the
// failure and the first after it, against the stream's median inter-token gap; the stream must
// complete (finish_reason length, 120 completion tokens, no error event).
//
//   npm run build:ts && node dist/bench/migration-gap.bench.js [trials=10] [step-ms=20] [protocol=sglang]

import { resolve } from 'node:path';
import { Model } from '../src/native/core.js';
import { startMockEngine, type MockEngine } from '../src/mock/engine-server.js';
import { QWEN3, startPortico, uptime } from './wrk-harness.js';

const trials = Number(process.argv[2] ?? 10);
const stepMs = Number(process.argv[3] ?? 20);
const protocol = (process.argv[4] ?? 'sglang') as 'sglang' | 'vllm';
const info = Model.load(resolve(QWEN3)).info();
const TOKENS = 120;
const KILL_AT = 30;

async function trial(): Promise<{ gap: number; itl: number; ok: boolean }> {
  const mocks: MockEngine[] = [];
  for (let i = 0; i < 2; i++) mocks.push(await startMockEngine({ port: 0, mode: 'sim', protocol, eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize, servedModelName: 'm', stepMs, eosProbability: 0 }));
  const fe = await startPortico(['serve', '--host', '127.0.0.1', '--http-port', '0', '--model-path', QWEN3, '--model-name', 'm', '--shards', '1', '--responses-store', 'off', ...mocks.flatMap((m) => ['--worker', m.url])]);
  try {
    const res = await fetch(`http://127.0.0.1:${fe.port}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Tell me a long story.' }], max_tokens: TOKENS, stream: true, stream_options: { include_usage: true } }),
    });
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let buf = '';
    const times: number[] = [];
    let killedAt = -1;
    let finish: string | null = null;
    let completion = 0;
    let error = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let cut: number;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const ev = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        if (!ev.startsWith('data: {')) continue;
        const j = JSON.parse(ev.slice(6)) as { error?: unknown; choices?: { delta?: { content?: string }; finish_reason?: string | null }[]; usage?: { completion_tokens: number } };
        if (j.error) error = true;
        if (j.choices?.[0]?.delta?.content) times.push(performance.now());
        finish = j.choices?.[0]?.finish_reason ?? finish;
        if (j.usage) completion = j.usage.completion_tokens;
        if (times.length === KILL_AT && killedAt < 0) {
          killedAt = times.length;
          const victim = mocks.find((m) => m.stats.active > 0) ?? mocks[0]!;
          void victim.close();
        }
      }
    }
    const gaps = times.slice(1).map((t, k) => t - times[k]!);
    const gap = gaps[KILL_AT - 1] ?? NaN; // between event KILL_AT and the next
    const sorted = [...gaps].sort((a, b) => a - b);
    return { gap, itl: sorted[Math.floor(sorted.length / 2)]!, ok: !error && finish === 'length' && completion === TOKENS };
  } finally {
    fe.child.kill('SIGTERM');
    await Promise.all(mocks.map((m) => m.close()));
  }
}

console.log(`${trials} trials, ${protocol}, sim decode step ${stepMs} ms, ${TOKENS}-token streams, the serving engine killed after ${KILL_AT} content events; load: ${uptime()}`);
const rows: { gap: number; itl: number; ok: boolean }[] = [];
for (let i = 0; i < trials; i++) rows.push(await trial());
const gaps = rows.map((r) => r.gap).sort((a, b) => a - b);
const itls = rows.map((r) => r.itl).sort((a, b) => a - b);
const q = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
console.log(`| | p50 ms | p90 ms | max ms |\n|---|---:|---:|---:|`);
console.log(`| gap at the migration | ${q(gaps, 0.5).toFixed(1)} | ${q(gaps, 0.9).toFixed(1)} | ${gaps[gaps.length - 1]!.toFixed(1)} |`);
console.log(`| median inter-token gap of the same streams | ${q(itls, 0.5).toFixed(1)} | ${q(itls, 0.9).toFixed(1)} | ${itls[itls.length - 1]!.toFixed(1)} |`);
console.log(`complete without error: ${rows.filter((r) => r.ok).length}/${rows.length}`);
process.exit(0);
