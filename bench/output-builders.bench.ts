// Per-token cost of writing parsed output as Anthropic content blocks and Responses output
// items (src/protocol/anthropic-content.ts, responses-output.ts), against the chat chunk
// writer on the same tokens, measured in one run.
//   npm run build:ts && node dist/bench/output-builders.bench.js
// Each run streams 200k tokens of ~4 characters: all content, then reasoning followed by
// content, then content with a tool call every 100 tokens (50 argument fragments each).
import os from 'node:os';
import { AnthropicContent } from '../src/protocol/anthropic-content.js';
import { ResponseOutput } from '../src/protocol/responses-output.js';
import { ChatChunkWriter } from '../src/protocol/chat-response.js';
import { ResponsesStreamWriter } from '../src/protocol/responses-response.js';
import type { ResponsesRequest } from '../src/protocol/responses-request.js';

const N = 200_000;
const TOKEN = 'word';
type Kind = 'content' | 'reasoning' | 'tool_start' | 'tool_args';

function workload(name: string): Kind[] {
  const out: Kind[] = [];
  for (let i = 0; i < N; i++) {
    if (name === 'content') out.push('content');
    else if (name === 'reasoning+content') out.push(i < N / 2 ? 'reasoning' : 'content');
    else out.push(i % 100 === 0 ? 'tool_start' : i % 100 <= 50 ? 'tool_args' : 'content');
  }
  return out;
}

interface Sink {
  step(k: Kind, i: number): string;
  end(): string;
}

const SINKS: Record<string, () => Sink> = {
  'chat chunks (baseline)': () => {
    const w = new ChatChunkWriter('chatcmpl-x', 'm', 0);
    return {
      step: (k, i) => (k === 'content' ? w.content(0, TOKEN) : k === 'reasoning' ? w.reasoning(0, TOKEN) : k === 'tool_start' ? w.toolStart(0, i, `call_${i}`, 'f') : w.toolArgs(0, 0, TOKEN)),
      end: () => w.finish(0, 'stop', null),
    };
  },
  'anthropic blocks': () => {
    const c = new AnthropicContent(true);
    return { step: (k, i) => (k === 'content' ? c.text(TOKEN) : k === 'reasoning' ? c.thinking(TOKEN) : k === 'tool_start' ? c.toolStart(`call_${i}`, 'f') : c.toolArgs(TOKEN)), end: () => c.finish() };
  },
  'responses items': () => {
    const w = new ResponsesStreamWriter({ id: 'resp_abc', hex: 'abc', createdAt: 0, req: {} as ResponsesRequest });
    const o = new ResponseOutput('abc', w);
    return { step: (k, i) => (k === 'content' ? o.text(TOKEN) : k === 'reasoning' ? o.reasoning(TOKEN) : k === 'tool_start' ? o.toolStart(`call_${i}`, 'f') : o.toolArgs(TOKEN)), end: () => o.finish(false) };
  },
};

function run(make: () => Sink, kinds: Kind[]): number {
  const s = make();
  let bytes = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < kinds.length; i++) bytes += s.step(kinds[i], i).length;
  bytes += s.end().length;
  const ns = Number(process.hrtime.bigint() - t0);
  if (bytes === 0) throw new Error('nothing written');
  return ns / kinds.length;
}

console.log(`node ${process.version}, ${os.cpus()[0].model}, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
for (const w of ['content', 'reasoning+content', 'content+tool calls']) {
  const kinds = workload(w);
  const rows: [string, number][] = [];
  for (const [name, make] of Object.entries(SINKS)) {
    run(make, kinds); // warm-up
    const best = Math.min(...[0, 1, 2, 3, 4].map(() => run(make, kinds)));
    rows.push([name, best]);
  }
  const base = rows[0][1];
  console.log(`\n${w}`);
  for (const [name, ns] of rows) console.log(`  ${name.padEnd(24)} ${ns.toFixed(0).padStart(5)} ns/token  ${(ns / base).toFixed(2)}x`);
}
