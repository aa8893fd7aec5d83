// Router replica sync, measured: two frontend replicas (kv mode, --event-plane) behind a
// round-robin "load balancer" (this client alternates them per request) in front of four
// sim workers that publish their KV events on NATS, with a shared-prefix multi-turn
// workload; replica sync on, replica sync off (--no-replica-sync), and one replica alone,
// in the same run against the same workers and NATS (each configuration uses its own
// prompts, so none starts with another's cache warm).
//
//   node dist/bench/replica-sync.bench.js [conversations=24] [turns=4] [concurrency=8]   (BENCH_REVERSE=1: reverse order)
//
// Per configuration: the cached-token rate (sum of usage.prompt_tokens_details.cached_tokens
// over sum of prompt tokens, from the streamed usage chunk) and TTFT p50/p99 measured by
// the client (request sent to first content delta).

import { performance } from 'node:perf_hooks';
import { startPortico, QWEN3, type Proc } from '../test/helpers/portico.js';
import { startNats } from '../test/helpers/nats.js';

const [CONVS, TURNS, CONC] = [Number(process.argv[2] ?? 24), Number(process.argv[3] ?? 4), Number(process.argv[4] ?? 8)];
const SYSTEM_PREFIXES = 4; // conversations share one of four long system prompts

interface Result {
  ttft: number[];
  prompt: number;
  cached: number;
  failed: number;
}

async function turn(url: string, messages: { role: string; content: string }[], r: Result): Promise<string> {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages, max_tokens: 16, stream: true, stream_options: { include_usage: true } }),
  });
  if (res.status !== 200) {
    r.failed++;
    await res.text();
    return '';
  }
  let text = '';
  let first = 0;
  let buf = '';
  const dec = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += dec.decode(chunk, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (!ev.startsWith('data: ') || ev === 'data: [DONE]') continue;
      const j = JSON.parse(ev.slice(6));
      const d = j.choices?.[0]?.delta?.content;
      if (d) {
        if (!first) first = performance.now();
        text += d;
      }
      if (j.usage) {
        r.prompt += j.usage.prompt_tokens;
        r.cached += j.usage.prompt_tokens_details?.cached_tokens ?? 0;
      }
    }
  }
  if (first) r.ttft.push(first - t0);
  return text;
}

async function workload(tag: string, replicas: Proc[]): Promise<Result> {
  const r: Result = { ttft: [], prompt: 0, cached: 0, failed: 0 };
  let lb = 0;
  const system = Array.from({ length: SYSTEM_PREFIXES }, (_, i) => `${tag} system prompt ${i}: ${'You are a careful assistant who answers briefly and cites the manual. '.repeat(60)}`);
  let next = 0;
  const conversation = async () => {
    for (let c = next++; c < CONVS; c = next++) {
      const messages = [{ role: 'system', content: system[c % SYSTEM_PREFIXES]! }];
      for (let t = 0; t < TURNS; t++) {
        messages.push({ role: 'user', content: `conversation ${c} question ${t}: ${'what does section four say about the valves? '.repeat(8)}` });
        const url = replicas[lb++ % replicas.length]!.url;
        messages.push({ role: 'assistant', content: await turn(url, messages, r) });
      }
    }
  };
  await Promise.all(Array.from({ length: CONC }, conversation));
  return r;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

const nats = await startNats();
const procs: Proc[] = [];
try {
  const engines: Proc[] = [];
  for (let i = 0; i < 4; i++) {
    const e = await startPortico(['mock-engine', '--port', '0', '--model-path', QWEN3, '--mode', 'sim', '--model-name', 'm', '--event-plane', nats.url, '--prefill-ms-per-token', '0.1', '--step-ms', '8', '--max-num-seqs', '8']);
    engines.push(e);
    procs.push(e);
  }
  const serve = (extra: string[]) => startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--router-mode', 'kv', '--event-plane', nats.url, ...engines.flatMap((e) => ['--worker', e.url]), ...extra]);
  const configs: [string, string[][]][] = [
    ['two replicas, sync on', [[], []]],
    ['two replicas, sync off', [['--no-replica-sync'], ['--no-replica-sync']]],
    ['one replica', [[]]],
  ];
  console.log(`workload: ${CONVS} conversations x ${TURNS} turns, ${CONC} at once, ${SYSTEM_PREFIXES} shared system prompts; 4 sim workers (prefill 0.1 ms/token, step 8 ms, 8 seqs)`);
  // BENCH_REVERSE=1 runs the configurations in the opposite order (order effects on a busy machine).
  if (process.env.BENCH_REVERSE === '1') configs.reverse();
  for (const [name, args] of configs) {
    const reps: Proc[] = [];
    for (const a of args) reps.push(await serve(a));
    const t0 = performance.now();
    const r = await workload(name.replace(/\W+/g, '-'), reps);
    const secs = (performance.now() - t0) / 1000;
    console.log(`${name.padEnd(24)} cached ${((100 * r.cached) / Math.max(r.prompt, 1)).toFixed(1)}% of ${r.prompt} prompt tokens | TTFT p50 ${pct(r.ttft, 50).toFixed(1)} ms p99 ${pct(r.ttft, 99).toFixed(1)} ms | ${r.ttft.length} ok, ${r.failed} failed, ${secs.toFixed(1)} s`);
    for (const p of reps) await p.stop();
  }
} finally {
  for (const p of procs) await p.stop();
  await nats.destroy();
}
