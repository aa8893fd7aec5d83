// Request migration, end to end: `portico serve` over three deterministic mock engines
// (`portico mock-engine --mode sim --deterministic`, child processes), with the qwen3
// reasoning and hermes tool parsers on, for each engine protocol. Every request is first run
// uninterrupted (its twin); then the same requests run at once, streamed and unary, n 1 and 2,
// best_of, stop strings, while workers are SIGKILLed at seeded points of the stream traffic
// and restarted on their ports. Every outcome (each choice's content, reasoning, tool calls and finish reason,
// and the usage) must equal its twin's: a migrated request lost and duplicated nothing.
// MIGRATION_SEED=N replays another schedule of requests and kills.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { mulberry32 } from '../src/mock/seeded.js';
import { eventually } from './helpers/eventually.js';
import {
  chatReq, completionReq, healthyWorkers, killEngine, migrationCounts, send, startEngine, startFrontend, workers,
  type Engine, type Protocol, type Req,
} from './helpers/migration.js';

const SEED = Number(process.env.MIGRATION_SEED ?? 20261207);
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa'];

/** 24 requests of every kind, their prompts and lengths from the seed. */
function workload(rand: () => number): Req[] {
  const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
  const out: Req[] = [];
  for (let i = 0; i < 24; i++) {
    const text = `${i}: ${words(3 + Math.floor(rand() * 6))}?`;
    const long = 200 + Math.floor(rand() * 200);
    switch (i % 8) {
      case 0: out.push(chatReq(text, { stream: true })); break;
      case 1: out.push(chatReq(text, { stream: true, n: 2 })); break;
      case 2: out.push(chatReq(text, { stream: true, maxTokens: long, ignoreEos: true })); break;
      case 3: out.push(chatReq(text, { stream: false })); break;
      case 4: out.push(chatReq(text, { stream: false, n: 2, maxTokens: long, ignoreEos: true })); break;
      case 5: out.push(completionReq(`${WORDS[i % WORDS.length]} ${text}`, { stream: true, maxTokens: long })); break;
      case 6: out.push(completionReq(`${WORDS[i % WORDS.length]} ${text}`, { stream: false, n: 2, bestOf: 3, maxTokens: long, ignoreEos: true })); break;
      // A stop string (Portico's alone: the engine goes past it) somewhere in the repeated script.
      default: out.push(chatReq(text, { stream: true, n: 2, maxTokens: long, ignoreEos: true, stop: ['zephyr', 'quartz'] })); break;
    }
  }
  return out;
}

async function underKills(protocol: Protocol, note: (msg: string) => void): Promise<void> {
  const rand = mulberry32(SEED ^ (protocol === 'vllm' ? 0x9e3779b9 : 0));
  const engines: Engine[] = [];
  for (let i = 0; i < 3; i++) engines.push(await startEngine(protocol));
  const s = await startFrontend(engines.map((e) => e.url));
  try {
    await healthyWorkers(s, 3);
    const reqs = workload(rand);

    // The twins: every request once, at once, with no worker failing.
    let twinEvents = 0;
    const twins = await Promise.all(reqs.map((r) => send(s.url, r, () => twinEvents++)));
    for (const [i, t] of twins.entries()) {
      assert.equal(t.status, 200, `twin ${i}: ${t.error}`);
      assert.equal(t.error, undefined, `twin ${i}`);
    }
    assert.equal((await migrationCounts(s)).total, 0, 'the twins ran without a migration');
    // The workload reaches the parsers: reasoning, answers and hermes tool calls.
    assert.ok(twins.some((t) => Object.values(t.choices).some((c) => c.tools.length > 0 && c.finish === 'tool_calls')), 'some twin made a tool call');
    assert.ok(twins.every((t) => Object.values(t.choices).every((c) => c.finish !== null)));
    assert.ok(twins.filter((t) => t.choices[0]!.reasoning.length > 0).length >= 12, 'chat twins have reasoning');

    // The same requests again, killing a worker at each seeded share of the stream events.
    const shares = [0.08 + rand() * 0.07, 0.25 + rand() * 0.1, 0.45 + rand() * 0.1];
    const thresholds = shares.map((x) => Math.floor(x * twinEvents));
    let events = 0;
    let next = 0;
    let killing: Promise<void> = Promise.resolve();
    const kills: string[] = [];
    // Workers killed and not back in rotation yet: one worker always stays up.
    const down = new Set<number>();
    const restarts: Promise<void>[] = [];
    const killOne = async () => {
      await eventually(() => engines.length - down.size >= 2, 'a restarted worker is back');
      const up = engines.map((_, i) => i).filter((i) => !down.has(i));
      const k = up[Math.floor(rand() * up.length)]!;
      const e = engines[k]!;
      down.add(k);
      kills.push(`worker ${k} at event ${events}`);
      await killEngine(e);
      // Back on its port: the frontend's health check brings it into rotation again.
      restarts.push((async () => {
        engines[k] = await startEngine(protocol, [], e.port);
        await eventually(async () => (await workers(s)).some((w) => w.url === e.url && w.healthy), `worker ${k} back in rotation`);
        down.delete(k);
      })());
    };
    const onEvent = () => {
      events++;
      if (next < thresholds.length && events >= thresholds[next]!) {
        next++;
        killing = killing.then(killOne);
      }
    };
    const runs = await Promise.all(reqs.map((r) => send(s.url, r, onEvent)));
    await killing;
    await Promise.all(restarts);
    assert.equal(kills.length, 3, `three workers were killed (${kills.join(', ')})`);

    const counts = await migrationCounts(s);
    note(`seed ${SEED}; ${twinEvents} stream events; kills: ${kills.join(', ')}; migrations ${JSON.stringify(counts.moved)}`);
    for (const [i, r] of runs.entries()) {
      assert.deepEqual(r, twins[i], `request ${i} (${JSON.stringify(reqs[i]!.body).slice(0, 120)}) equals its twin; seed ${SEED}, kills ${kills.join(', ')}, migrations ${JSON.stringify(counts.moved)}`);
    }
    assert.ok((counts.moved['ongoing_request/disconnected'] ?? 0) + (counts.moved['ongoing_request/strike'] ?? 0) >= 1, `requests moved mid-generation: ${JSON.stringify(counts.moved)}`);
    assert.equal(counts.exhausted, 0);
  } finally {
    await s.stop();
    for (const e of engines) await killEngine(e);
  }
}

for (const protocol of ['sglang', 'vllm'] as const) {
  test(`${protocol}: workers SIGKILLed under load: every stream and answer equals its uninterrupted twin`, (t) => underKills(protocol, (m) => t.diagnostic(m)));
}

