// CPU per native encodeChat of a 25-message conversation with tool calls (render + encode,
// every call a messages-cache miss: the first message differs each time), for the addon
// file given, so two builds can be compared (e.g. an addon with the native message-shape
// check against one without). Run: node dist/bench/message-shape.bench.js ADDON.node MODEL_DIR [N]

import { createRequire } from 'node:module';

interface Addon {
  Model: { load(dir: string): { encodeChat(b: Buffer, s: number, e: number, ts: number, te: number, gen: boolean, kw: string | null): Uint32Array } };
}

const [addonPath, modelDir, count] = process.argv.slice(2);
if (!addonPath || !modelDir) throw new Error('usage: message-shape.bench.js ADDON.node MODEL_DIR [N]');
const addon = createRequire(import.meta.url)(addonPath) as Addon;
const model = addon.Model.load(modelDir);
const n = Number(count ?? 3000);

function body(i: number): Buffer {
  const msgs: object[] = [{ role: 'system', content: `You are helpful #${i}.` }];
  for (let t = 0; t < 8; t++) {
    msgs.push({ role: 'user', content: `question ${t} about the weather in city ${t}` });
    msgs.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${t}`, type: 'function', function: { name: 'get_weather', arguments: `{"city":"c${t}"}` } }] });
    msgs.push({ role: 'tool', tool_call_id: `c${t}`, content: `sunny ${t}` });
  }
  return Buffer.from(JSON.stringify({ messages: msgs }));
}

const bodies = Array.from({ length: n }, (_, i) => body(i));
const start = Buffer.byteLength('{"messages":');
for (let i = 0; i < Math.min(200, n); i++) model.encodeChat(bodies[i]!, start, bodies[i]!.length - 1, -1, -1, true, null);
const c0 = process.cpuUsage();
for (let i = 0; i < n; i++) model.encodeChat(bodies[i]!, start, bodies[i]!.length - 1, -1, -1, true, null);
const c = process.cpuUsage(c0);
console.log(`${addonPath}: ${((c.user + c.system) / n).toFixed(1)} us CPU per encodeChat (${n} calls, ${bodies[0]!.length} B messages)`);
