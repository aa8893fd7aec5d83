// KV-aware routing against round-robin and random on a shared-prefix, multi-turn
// workload over 8 simulated workers.
//
//   npm run build:ts && node dist/bench/router-workload.bench.js [--quick] [--runs N] [--out FILE]
//
// Eight simulated engines (one child process, speedup 4, simulated prefill 0.4 ms
// per uncached token, 16-token blocks, 2048 KV blocks = 32k tokens each) serve
// `portico serve --worker ... --router-mode M` (a second child). This process plays
// 48 agent sessions at once, closed loop: each session has one of 16 long system
// prompts (~1.8k tokens) and runs 6 turns; every turn sends the whole conversation
// so far (previous replies included) plus a ~90-token user message, max_tokens 24,
// then waits 300 ms (the agent's tool call) before the next turn. The offered load
// is kept under what the frontend can carry on this 2-core machine next to the
// simulator, so TTFT reflects the engines' prefill work, which routing changes. Each mode gets fresh engines (cold
// caches). Per mode: TTFT p50/p99 (server side, nvext timing: arrival to first
// token, so routing, queueing and prefill are in it), requests/s and output
// tokens/s over the run's wall time, and the cache hit rate (cached prompt
// tokens / prompt tokens, as the engines report them).

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { BIN, QWEN3 } from '../test/helpers/portico.js';
import { Model } from '../src/native/core.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const runs = Number(argv[argv.indexOf('--runs') + 1]) || (argv.includes('--runs') ? 1 : 2);
const outFile = argv.includes('--out') ? argv[argv.indexOf('--out') + 1]! : `${ROOT}bench/router-workload.json`;

const WORKERS = 8;
const SESSIONS = quick ? 24 : 48;
const PROMPTS = quick ? 8 : 16;
const TURNS = quick ? 4 : 6;
const SYSTEM_WORDS = 900;
const USER_WORDS = 45;
const MAX_TOKENS = 24;
/** Between a reply and the next turn (the agent's tool call). */
const THINK_MS = 300;
const ALL_MODES = ['kv', 'round-robin', 'random'] as const;
const MODES = argv.includes('--mode') ? ALL_MODES.filter((m) => m === argv[argv.indexOf('--mode') + 1]) : ALL_MODES;

const info = Model.load(QWEN3).info();
const ENGINE = {
  mode: 'sim',
  eosTokenIds: info.eosTokenIds,
  vocabSize: info.vocabSize,
  servedModelName: 'qwen3',
  speedupRatio: 4,
  prefillMsPerToken: 0.4,
  blockSize: 16,
  numBlocks: 2048,
  eosProbability: 0,
  seed: 1,
};

const CHILD = `
import { startMockEngine } from './dist/src/mock/engine-server.js';
const o = JSON.parse(process.argv[1]);
const ms = [];
for (let i = 0; i < ${WORKERS}; i++) ms.push(await startMockEngine({ ...o, seed: i + 1 }));
console.log(JSON.stringify(ms.map((m) => m.url)));
process.stdin.resume();
process.stdin.on('end', () => Promise.all(ms.map((m) => m.close())).then(() => process.exit(0)));
`;

async function startEngines(): Promise<{ urls: string[]; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, JSON.stringify(ENGINE)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  let buf = '';
  child.stdout!.setEncoding('utf8');
  const urls = await new Promise<string[]>((resolve) =>
    child.stdout!.on('data', (d: string) => {
      buf += d;
      if (buf.includes('\n')) resolve(JSON.parse(buf.slice(0, buf.indexOf('\n'))));
    }),
  );
  return { urls, child };
}

/** `portico serve` as a child; ROUTER_PROF=DIR writes its CPU profile there. */
async function startServer(args: string[]) {
  const node = process.env.ROUTER_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.ROUTER_PROF}`] : [];
  const child = spawn(process.execPath, [...node, BIN, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on \S+:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`portico exited with ${code}: ${out}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    /** CPU seconds the server process has used (Linux /proc). */
    cpuS(): number {
      try {
        const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        return (Number(f[11]) + Number(f[12])) / 100;
      } catch {
        return NaN;
      }
    },
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

let rs = 42;
const rnd = () => ((rs = (Math.imul(rs, 1103515245) + 12345) >>> 0) / 2 ** 32);
const WORDS = Array.from({ length: 4000 }, (_, i) => `w${(i * 7919) % 100003}`);
const text = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');

interface Sample {
  ttftMs: number;
  queueMs: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
}

interface ModeResult {
  mode: string;
  requests: number;
  failed: number;
  wallS: number;
  rps: number;
  outTps: number;
  ttftP50: number;
  ttftP99: number;
  /** Arrival to dispatch (tokenization, routing, router queue). */
  queueP50: number;
  hitRate: number;
  /** The portico process's CPU time per request (all of it: HTTP, tokenizing, routing, KV events, gRPC). */
  frontendCpuMsPerRequest: number;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};

async function runMode(mode: string): Promise<ModeResult> {
  rs = 42; // the same conversations for every mode
  const systems = Array.from({ length: PROMPTS }, (_, i) => `You are agent ${i}. ${text(SYSTEM_WORDS)}`);
  const { urls, child } = await startEngines();
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    server = await startServer(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'qwen3', '--router-mode', mode, '--router-block-size', '16', '--shards', '1', ...(process.env.ROUTER_EXTRA ? process.env.ROUTER_EXTRA.split(' ') : []), ...urls.flatMap((u) => ['--worker', u])]);
    const url = `${server.url}/v1/chat/completions`;
    const samples: Sample[] = [];
    let failed = 0;
    const session = async (s: number) => {
      const messages: { role: string; content: string }[] = [{ role: 'system', content: systems[s % PROMPTS]! }];
      for (let turn = 0; turn < TURNS; turn++) {
        messages.push({ role: 'user', content: text(USER_WORDS) });
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'qwen3', messages, max_tokens: MAX_TOKENS, nvext: { extra_fields: ['timing'] } }),
        });
        const j = (await res.json()) as any;
        if (res.status !== 200) {
          failed++;
          messages.push({ role: 'assistant', content: 'ok' });
          continue;
        }
        samples.push({ ttftMs: j.nvext.timing.ttft_ms, queueMs: j.nvext.timing.queue_ms, promptTokens: j.usage.prompt_tokens, cachedTokens: j.usage.prompt_tokens_details?.cached_tokens ?? 0, completionTokens: j.usage.completion_tokens });
        messages.push({ role: 'assistant', content: j.choices[0].message.content ?? '' });
        await new Promise((r) => setTimeout(r, THINK_MS));
      }
    };
    // Sessions start staggered over the first second, like agents arriving.
    const t0 = performance.now();
    const cpu0 = server.cpuS();
    await Promise.all(Array.from({ length: SESSIONS }, (_, s) => new Promise((r) => setTimeout(r, (s * 1000) / SESSIONS)).then(() => session(s))));
    const wallS = (performance.now() - t0) / 1000;
    const frontendCpuMsPerRequest = ((server.cpuS() - cpu0) * 1000) / Math.max(samples.length, 1);
    const ttft = samples.map((x) => x.ttftMs);
    const prompt = samples.reduce((a, x) => a + x.promptTokens, 0);
    const cached = samples.reduce((a, x) => a + x.cachedTokens, 0);
    const out = samples.reduce((a, x) => a + x.completionTokens, 0);
    return { mode, requests: samples.length, failed, wallS, rps: samples.length / wallS, outTps: out / wallS, ttftP50: pct(ttft, 0.5), ttftP99: pct(ttft, 0.99), queueP50: pct(samples.map((x) => x.queueMs), 0.5), hitRate: cached / prompt, frontendCpuMsPerRequest };
  } finally {
    await server?.stop();
    child.stdin!.end();
    await new Promise((r) => child.once('exit', r));
  }
}

const results: ModeResult[] = [];
for (let r = 0; r < runs; r++) {
  // Alternate the order between runs so drift on a shared machine does not favour one mode.
  const order = r % 2 === 0 ? MODES : [...MODES].reverse();
  for (const m of order) {
    const res = await runMode(m);
    results.push(res);
    console.error(`run ${r + 1} ${m}: ${JSON.stringify(res)}`);
  }
}

const f = (n: number, d = 1) => n.toFixed(d);
console.log(`${WORKERS} workers, ${SESSIONS} sessions × ${TURNS} turns (${THINK_MS} ms think time), ${PROMPTS} system prompts of ~${SYSTEM_WORDS * 2} tokens, max_tokens ${MAX_TOKENS}, ${runs} run(s) per mode (median shown)`);
console.log('| mode | TTFT p50 ms | TTFT p99 ms | arrival→dispatch p50 ms | requests/s | output tok/s | cache hit rate | failed |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
const summary = MODES.map((m) => {
  const rs = results.filter((x) => x.mode === m);
  const med = (k: keyof ModeResult) => pct(rs.map((x) => x[k] as number), 0.5);
  return { mode: m, ttftP50: med('ttftP50'), ttftP99: med('ttftP99'), queueP50: med('queueP50'), rps: med('rps'), outTps: med('outTps'), hitRate: med('hitRate'), failed: rs.reduce((a, x) => a + x.failed, 0) };
});
for (const s of summary) console.log(`| ${s.mode} | ${f(s.ttftP50)} | ${f(s.ttftP99)} | ${f(s.queueP50)} | ${f(s.rps)} | ${f(s.outTps, 0)} | ${f(s.hitRate * 100)}% | ${s.failed} |`);
writeFileSync(outFile, JSON.stringify({ config: { WORKERS, SESSIONS, PROMPTS, TURNS, MAX_TOKENS, engine: ENGINE }, runs: results, summary }, null, 2));
