// The "engine alone" side of bench/real-engine, a process of its own (run where a frontend
// would run, so it does not share the engine's core): the open-loop driver of `portico bench`
// (src/bench/loop.ts) with, in place of its HTTP client, one that sends each request straight
// to the engine worker with Portico's own engine client (src/engine). A request is a streamed
// Generate of `--prompt-tokens` random token ids (the length the frontends' chat prompts
// tokenize to) and max_tokens, ignore_eos; TTFT is its first token chunk. Prints the
// measures of the counted phase as JSON.
//   node dist/bench/real-engine/direct.js --url vllm+grpc://HOST:PORT --tokenizer DIR --rate R
//     --duration S --warmup N --prompt-tokens N --input-tokens N --output-tokens N --seed N

import { parseArgs } from 'node:util';
import type { Timing } from '../../src/bench/client.js';
import type { Load, Target } from '../../src/bench/config.js';
import { runPhase } from '../../src/bench/loop.js';
import { measure } from '../../src/bench/measures.js';
import { buildWorkload } from '../../src/bench/workload.js';
import { createEngineClient } from '../../src/engine/factory.js';
import type { EngineClient } from '../../src/engine/types.js';
import { mulberry32 } from '../../src/mock/seeded.js';

/** Ordinary-text token ids of the Qwen3 vocabulary (below its special tokens). */
const ID_LO = 1000;
const ID_HI = 150_000;

export class EngineBenchClient {
  private readonly rand: () => number;
  private next = 0;

  constructor(
    private readonly engine: EngineClient,
    private readonly promptTokens: number,
    seed = 1,
  ) {
    this.rand = mulberry32(seed);
  }

  async send(_path: string, body: unknown, timeoutMs: number): Promise<Timing> {
    const maxTokens = (body as { max_tokens: number }).max_tokens;
    // Random ids per request: no two prompts share a prefix the engine could reuse.
    const inputIds = Uint32Array.from({ length: this.promptTokens }, () => ID_LO + Math.floor(this.rand() * (ID_HI - ID_LO)));
    const t: Timing = { ok: false, status: null, e2eMs: 0, ttftMs: null, ttfoMs: null, gapsMs: [], promptTokens: null, outputTokens: null, reasoningTokens: null, cachedTokens: null, text: '', reasoning: '' };
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
    const t0 = performance.now();
    let last = t0;
    try {
      for await (const ev of this.engine.generate({ requestId: `direct-${this.next++}`, inputIds, maxNewTokens: maxTokens, ignoreEos: true, stream: true }, ac.signal)) {
        const now = performance.now();
        if (ev.kind === 'chunk') {
          if (t.ttftMs === null) t.ttftMs = t.ttfoMs = now - t0;
          else t.gapsMs.push(now - last);
          last = now;
          t.outputTokens = ev.chunk.completionTokens;
          t.promptTokens = ev.chunk.promptTokens;
        } else {
          t.outputTokens = ev.done.completionTokens;
          break;
        }
      }
      t.ok = true;
    } catch (err) {
      t.errorKind = ac.signal.aborted ? 'timeout' : 'stream';
      t.error = (err as Error).message;
    } finally {
      clearTimeout(timer);
    }
    t.e2eMs = performance.now() - t0;
    return t;
  }
}

const { values: o } = parseArgs({ options: Object.fromEntries(['url', 'tokenizer', 'rate', 'duration', 'warmup', 'prompt-tokens', 'input-tokens', 'output-tokens', 'seed', 'max-concurrency'].map((k) => [k, { type: 'string' as const }])) });
const num = (k: string) => Number(o[k]);
const engine = createEngineClient(o.url as string);
try {
  const client = new EngineBenchClient(engine, num('prompt-tokens'));
  const wanted = num('warmup') + Math.ceil(num('rate') * num('duration') * 2);
  const workload = buildWorkload({ tokenizer: o.tokenizer as string, inputTokens: num('input-tokens'), outputTokens: num('output-tokens'), sharedPrefix: 0, prefixes: 1, turns: 1, seed: num('seed') }, wanted);
  const target: Target = { url: o.url as string, model: 'engine', endpoint: 'chat', stream: true, timeoutMs: 60_000 };
  const load: Load = { kind: 'open', rate: num('rate'), maxConcurrency: num('max-concurrency') };
  // Warm-up and counted phase with the same seed, as bench/real-engine runs `portico bench` for the frontends.
  await runPhase(client, target, workload, { load, requests: num('warmup'), durationS: null, firstSession: 0, seed: num('seed') }, () => {});
  const phase = await runPhase(client, target, workload, { load, requests: null, durationS: num('duration'), firstSession: 0, seed: num('seed') }, () => {});
  process.stdout.write(`${JSON.stringify(measure(phase.records, phase.durationS, undefined).measures)}\n`);
} finally {
  engine.close();
}
