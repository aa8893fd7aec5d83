// What building a request's GenerationRequest costs (src/pipeline/request.ts), against the
// same object built with its output options as a spread of the output rules
// followed by six new keys, which V8 builds through its runtime key by key (~3.8 µs a request,
// the literal ~20 ns). Inputs are what a one-message chat with max_tokens 1 reads to
// (readChatRequest on a real body). benchmark.js, both in one run.
//
// Run: npm run build:ts && node dist/bench/request-build.bench.js

import Benchmark from 'benchmark';

import { engineParams, generationRequest, routeFor, type GenerationInput, type GenerationRequest } from '../src/pipeline/request.js';
import { readChatRequest } from '../src/protocol/chat-request.js';
import type { ServedModel } from '../src/pipeline/served-model.js';

const body = Buffer.from('{"model":"models","messages":[{"role":"user","content":"Hello there, how are you today?"}],"max_tokens":1}');
const req = readChatRequest(body, false, () => '');
const model = { info: { samplingDefaults: {} }, adapter: undefined } as unknown as ServedModel;
const input: GenerationInput = {
  model, promptIds: new Uint32Array(20), sampling: req.sampling, maxTokens: 1, requestId: 'chatcmpl-1', signal: new AbortController().signal,
  route: {}, arrived: 0, skipSpecialTokens: true, parsing: null, collectTokenIds: false,
};

/** The session-7 shape: output = { ...rules, n, skipSpecialTokens, collectTokenIds, arrived, parsing }. */
function withSpread(i: GenerationInput): GenerationRequest {
  const s = i.maxTokens === i.sampling.maxTokens ? i.sampling : { ...i.sampling, maxTokens: i.maxTokens };
  const rules = { stop: s.stop, stopTokenIds: s.stopTokenIds, includeStopStrInOutput: s.includeStopStrInOutput, minTokens: s.minTokens, ignoreEos: s.ignoreEos, maxTokens: i.maxTokens };
  return {
    model: i.model,
    promptIds: i.promptIds,
    engine: engineParams(i.model, i.requestId, i.promptIds, s, i.route),
    output: { ...rules, n: s.n, skipSpecialTokens: i.skipSpecialTokens, collectTokenIds: i.collectTokenIds, arrived: i.arrived, parsing: i.parsing ?? null },
    route: routeFor(i.model, i.route),
    signal: i.signal,
    logprobs: s.logprobs === true,
    limit: null,
    trace: null,
  };
}

let keep: GenerationRequest | undefined;
await new Promise<void>((resolve) => {
  new Benchmark.Suite('GenerationRequest of a one-message chat')
    .add('A: output as a spread of the rules + 6 keys', () => {
      keep = withSpread(input);
    })
    .add('B: generationRequest (one object literal)', () => {
      keep = generationRequest(input);
    })
    .on('cycle', (e: Benchmark.Event) => {
      const t = e.target as Benchmark.Target & { stats: { mean: number; rme: number } };
      console.log(`${t.name}: ${(t.stats.mean * 1e9).toFixed(0)} ns per request (±${t.stats.rme.toFixed(1)} %)`);
    })
    .on('complete', () => resolve())
    .run();
});
if (keep === undefined) throw new Error('nothing built');
