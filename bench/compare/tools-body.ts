// The tool-calling chat workload of bench/compare: OpenAI chat bodies with a hermes-style
// `tools` list (two functions, JSON-schema parameters, tool_choice auto), written as a
// `portico bench --dataset` file (one request body a line, sent as written). Every frontend
// renders the tools into the Qwen3 chat template's system block and runs its tool-call
// parser over the streamed output. The mock engines generate random tokens, so the parser
// scans every chunk but finds no call: the figure is the cost of a tools request and of
// having the parser on the stream, not of parsing a call.

import { writeFileSync } from 'node:fs';

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather in a city.',
      parameters: { type: 'object', properties: { city: { type: 'string', description: 'City name' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['city'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'search_flights',
      description: 'Flights between two airports on a date.',
      parameters: { type: 'object', properties: { from: { type: 'string' }, to: { type: 'string' }, date: { type: 'string', description: 'YYYY-MM-DD' } }, required: ['from', 'to', 'date'] },
    },
  },
];

const CITIES = ['Paris', 'Lagos', 'Osaka', 'Lima', 'Oslo', 'Perth', 'Quito', 'Dakar'];

/** `n` request bodies (different questions, same tools), `maxTokens` out each, EOS ignored. */
export function toolBodies(n: number, maxTokens: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({
    messages: [
      { role: 'system', content: 'You are a travel assistant. Use the tools when they help.' },
      { role: 'user', content: `What is the weather in ${CITIES[i % CITIES.length]} today, and is there a flight from there to ${CITIES[(i + 3) % CITIES.length]} on 2026-12-${String(10 + (i % 18)).padStart(2, '0')}?` },
    ],
    tools: TOOLS,
    tool_choice: 'auto',
    max_tokens: maxTokens,
    ignore_eos: true,
  }));
}

export function writeToolsDataset(path: string, n = 32, maxTokens = 64): string {
  writeFileSync(path, `${toolBodies(n, maxTokens).map((b) => JSON.stringify(b)).join('\n')}\n`);
  return path;
}
