// What a stored chain gives KV-aware routing: CHAINS conversations of 5 turns through
// /v1/responses, each turn sent with only its new input and previous_response_id, against
// `portico serve --mock sim --mock-workers 4` (sim engines with a real KV cache and KV
// events). The frontend expands the chain, so turn n's prompt starts with turn n-1's whole
// prompt; kv routing sends it to the worker holding those blocks. Reported: per turn, the
// share of prompt tokens the engine found cached (usage.input_tokens_details.cached_tokens),
// kv vs round-robin; and the serve process's CPU per request from /proc (frontend plus its
// in-process sim engines), store in memory vs on a file vs off.
//   npm run build:ts && node dist/bench/responses-chain.bench.js [chains=24]

import { readFileSync, rmSync } from 'node:fs';
import { startProc, QWEN3 } from './serve-procs.js';

const CHAINS = Number(process.argv[2] ?? 24);
const TURNS = 5;
const PORT = 26020;

function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, clock ticks of 10 ms
}

/** A distinct opening of ~300 tokens per chain, so chains do not share blocks with each other. */
function opening(i: number): string {
  const words = Array.from({ length: 220 }, (_, j) => `w${(i * 7919 + j * 104729) % 100000}`);
  return `Conversation ${i}. Context: ${words.join(' ')}. First question?`;
}

interface Usage { input_tokens: number; input_tokens_details: { cached_tokens: number } }

async function post(port: number, body: object): Promise<{ id: string; usage: Usage }> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string; usage: Usage };
}

async function run(mode: string, store: string, chained: boolean) {
  const { proc, port } = await startProc(
    ['serve', '--http-port', String(PORT), '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'sim', '--mock-workers', '4', '--router-mode', mode, '--responses-store', store, '--shards', '1'],
    [],
    /listening on \S+:(\d+)/,
  );
  const perTurn = Array.from({ length: TURNS }, () => ({ input: 0, cached: 0 }));
  try {
    const cpu0 = cpuMs(proc.child.pid!);
    // The chains run side by side (4 at a time), as several agents would.
    const queue = Array.from({ length: CHAINS }, (_, i) => i);
    const worker = async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        let prev: string | null = null;
        for (let t = 0; t < TURNS; t++) {
          const input = t === 0 ? opening(i) : `Follow-up ${t} of conversation ${i}: and then?`;
          const r = await post(port, { model: 'm', input, max_output_tokens: 24, ...(chained && prev ? { previous_response_id: prev } : {}), ...(store === 'off' ? { store: false } : {}) });
          perTurn[t]!.input += r.usage.input_tokens;
          perTurn[t]!.cached += r.usage.input_tokens_details.cached_tokens;
          prev = r.id;
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    const cpu = cpuMs(proc.child.pid!) - cpu0;
    return { perTurn, cpuPerRequestMs: cpu / (CHAINS * TURNS) };
  } finally {
    proc.child.kill('SIGTERM');
    await new Promise((r) => proc.child.once('exit', r));
  }
}

const pct = (c: number, i: number) => `${((100 * c) / Math.max(1, i)).toFixed(1)}%`;
for (const [mode, store, chained] of [
  ['kv', 'sqlite::memory:', true],
  ['round-robin', 'sqlite::memory:', true],
  ['kv', 'sqlite:/tmp/portico-bench-responses.db', true],
  ['kv', 'off', false],
] as const) {
  const r = await run(mode, store, chained);
  const later = r.perTurn.slice(1).reduce((a, t) => ({ input: a.input + t.input, cached: a.cached + t.cached }), { input: 0, cached: 0 });
  console.log(
    `${mode.padEnd(11)} store=${store.padEnd(38)} chained=${chained} cached per turn: ${r.perTurn.map((t) => pct(t.cached, t.input)).join(' ')}  turns 2-5: ${pct(later.cached, later.input)}  avg prompt turn 5: ${Math.round(r.perTurn[4]!.input / CHAINS)}  process CPU/request: ${r.cpuPerRequestMs.toFixed(2)} ms`,
  );
}
rmSync('/tmp/portico-bench-responses.db', { force: true });
rmSync('/tmp/portico-bench-responses.db-wal', { force: true });
rmSync('/tmp/portico-bench-responses.db-shm', { force: true });
