// The client loop of one phase (warm-up or measured): closed loop keeps `concurrency`
// sessions in flight, each sending its turns back to back; open loop starts sessions at
// Poisson arrival times (`rate` per second), at most `maxConcurrency` in flight (an arrival
// that finds no free slot waits for one; as in vLLM's benchmark, latency counts from the send).
// A phase stops issuing when its request count or its duration is reached; requests in
// flight then finish and count.

import type { Endpoint, Load, Target } from './config.js';
import type { Client, Timing } from './client.js';
import { requestBody, type Exchange, type Workload } from './workload.js';
import { mulberry32 } from '../mock/seeded.js';

export interface RequestRecord extends Timing {
  /** Order in which the request was issued in its phase. */
  index: number;
  session: number;
  turn: number;
  /** When it was sent, ms since the phase began. */
  startMs: number;
}

export interface PhaseResult {
  records: RequestRecord[];
  /** From the phase's start to the end of its last request. */
  durationS: number;
  /** CPU seconds this process spent in the phase (user + system): the load generator's own cost. */
  clientCpuS: number;
}

export interface Phase {
  load: Load;
  requests: number | null;
  durationS: number | null;
  /** The first session index to use (so the measured phase does not resend the warm-up's). */
  firstSession: number;
  seed: number;
}

function pathOf(endpoint: Endpoint): string {
  return endpoint === 'chat' ? '/v1/chat/completions' : '/v1/completions';
}

/** `client` is anything that sends one request and times it: the HTTP client, or bench/real-engine's engine client. */
export async function runPhase(client: Pick<Client, 'send'>, target: Target, workload: Workload, phase: Phase, onRecord: (r: RequestRecord) => void): Promise<PhaseResult> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const deadline = phase.durationS === null ? Infinity : t0 + phase.durationS * 1000;
  const records: RequestRecord[] = [];
  let issued = 0;
  let nextSession = phase.firstSession;
  const canIssue = () => (phase.requests === null || issued < phase.requests) && performance.now() < deadline;

  const runSession = async (s: number) => {
    const session = workload.session(s);
    const history: Exchange[] = [];
    const system = session.turns[0]?.kind === 'synthetic' ? session.turns[0].system : undefined;
    for (let turn = 0; turn < session.turns.length; turn++) {
      if (turn > 0 && !canIssue()) return;
      const t = session.turns[turn];
      const index = issued++;
      const startMs = performance.now() - t0;
      const body = requestBody(t, history, system, target.endpoint, target.model, target.stream);
      const timing = await client.send(pathOf(target.endpoint), body, target.timeoutMs);
      const rec: RequestRecord = { ...timing, index, session: s, turn, startMs };
      records.push(rec);
      onRecord(rec);
      if (!timing.ok) return;
      if (t.kind === 'synthetic') history.push({ user: t.user, assistant: timing.text });
    }
  };

  if (phase.load.kind === 'closed') {
    const workers = Array.from({ length: phase.load.concurrency }, async () => {
      while (canIssue()) await runSession(nextSession++);
    });
    await Promise.all(workers);
  } else {
    const { rate, maxConcurrency } = phase.load;
    const rand = mulberry32(phase.seed);
    const inflight = new Set<Promise<void>>();
    let due = t0;
    while (canIssue()) {
      due += (-Math.log(1 - rand()) / rate) * 1000;
      if (due >= deadline) break;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      while (inflight.size >= maxConcurrency) await Promise.race(inflight);
      if (!canIssue()) break;
      const p: Promise<void> = runSession(nextSession++).finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await Promise.all(inflight);
  }
  const end = records.reduce((m, r) => Math.max(m, r.startMs + r.e2eMs), 0);
  const cpu = process.cpuUsage(cpu0);
  return { records, durationS: (records.length ? end : performance.now() - t0) / 1000, clientCpuS: (cpu.user + cpu.system) / 1e6 };
}
