// Streaming latency measurement shared by the stream benches: clients that time every
// token's arrival on CLOCK_MONOTONIC (the clock the sim engine's emission trace uses, see
// PORTICO_SIM_EMIT_TRACE in src/cli/mock-engine.ts), and the per-token latency
// (client arrival − engine emission) computed from the two.
//
// Two clients through Portico: a raw net socket that only counts content deltas in the
// bytes (no HTTP parser, no string decoding: the lightest client, so it is not the limit)
// and node:http (the client of the earlier figures).

import http from 'node:http';
import net from 'node:net';

import { createEngineClient } from '../src/engine/factory.js';
import { newSequence, type Model } from '../src/native/core.js';

/**
 * CLOCK_MONOTONIC in ms. Not performance.now() plus an offset taken at load: Node moves
 * performance.now()'s time origin once after start-up (measured: 5-18 ms), which shifted
 * every arrival by that much.
 */
export const mono = (): number => Number(process.hrtime.bigint()) / 1e6;

/** Per stream: the arrival time of every read that carried tokens, and how many it carried. */
export interface Arrivals {
  /** time, count, time, count, ... */
  reads: number[];
}

export type Trace = Record<string, number[]>;

export function quantiles(xs: number[]): { p50: number; p99: number; p999: number; max: number } {
  xs.sort((a, b) => a - b);
  const q = (p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
  return { p50: q(0.5), p99: q(0.99), p999: q(0.999), max: xs[xs.length - 1]! };
}

/** Inter-arrival gaps as the earlier bench defined them (a read with n tokens adds n − 1 zero gaps). */
export function gapsOf(all: Map<string, Arrivals>): number[] {
  const gaps: number[] = [];
  for (const a of all.values()) {
    const r = a.reads;
    for (let i = 0; i < r.length; i += 2) {
      if (i > 0) gaps.push(r[i]! - r[i - 2]!);
      for (let k = 1; k < r[i + 1]!; k++) gaps.push(0);
    }
  }
  return gaps;
}

const prompt = Uint32Array.from({ length: 12 }, (_, i) => 1000 + i);

/** Baseline: the engine read directly with Portico's engine client (no HTTP); tokens counted one per id. */
export async function direct(url: string, streams: number, tokens: number, tag = 'direct'): Promise<{ arrivals: Map<string, Arrivals>; tokens: number; secs: number; clientCpu: number }> {
  const client = createEngineClient(url);
  const arrivals = new Map<string, Arrivals>();
  let total = 0;
  const one = async (k: number) => {
    const id = `${tag}-${k}`;
    const a: Arrivals = { reads: [] };
    arrivals.set(id, a);
    for await (const ev of client.generate({ requestId: id, inputIds: prompt, maxNewTokens: tokens, ignoreEos: true, stream: true }, new AbortController().signal)) {
      const n = ev.kind === 'chunk' ? ev.chunk.tokenIds.length : 0;
      if (n === 0) continue;
      a.reads.push(mono(), n);
      total += n;
    }
  };
  const run = await runAll(streams, one);
  client.close();
  return { arrivals, tokens: total, ...run };
}

export const chatBody = (maxTokens: number) =>
  JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Tell me a story.' }], max_tokens: maxTokens, ignore_eos: true, stream: true, stream_options: { include_usage: true } });

export interface ViaResult {
  arrivals: Map<string, Arrivals>;
  /** Content deltas counted. */
  events: number;
  /** completion_tokens from the usage chunks. */
  completion: number;
  secs: number;
  clientCpu: number;
}

const CONTENT = Buffer.from('"content":"');
const QUOTE = 0x22;
const END = Buffer.from('\r\n0\r\n\r\n');
const USAGE_RE = /"completion_tokens":(\d+)/;

/** Runs `one(k)` for every k < streams at once: the wall time and this process's CPU over them. */
async function runAll(streams: number, one: (k: number) => Promise<void>): Promise<{ secs: number; clientCpu: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: streams }, (_, k) => one(k)));
  const secs = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { secs, clientCpu: (c.user + c.system) / 1e6 };
}

/** What the SSE clients count: each stream's timed reads, content deltas, completion_tokens. */
class Tally {
  readonly arrivals = new Map<string, Arrivals>();
  private events = 0;
  private completion = 0;

  open(id: string): Arrivals {
    const a: Arrivals = { reads: [] };
    this.arrivals.set(id, a);
    return a;
  }

  /** `n` content deltas arrived in one read at `now`. */
  count(a: Arrivals, now: number, n: number): void {
    if (n === 0) return;
    a.reads.push(now, n);
    this.events += n;
  }

  /** The end of a stream: its usage chunk's completion_tokens. */
  usage(tail: string): void {
    const u = USAGE_RE.exec(tail);
    if (u) this.completion += Number(u[1]);
  }

  result(): { arrivals: Map<string, Arrivals>; events: number; completion: number } {
    return { arrivals: this.arrivals, events: this.events, completion: this.completion };
  }
}

/**
 * Through Portico with raw sockets: one connection per stream, HTTP/1.1 written by hand,
 * the response bytes scanned for `"content":"` followed by a non-empty string (the role
 * chunk's empty content, finish and usage chunks carry no token), the chunked terminator
 * ends the stream. Every read is timed when it arrives.
 */
export async function viaRaw(port: number, streams: number, tokens: number, tag = 'via'): Promise<ViaResult> {
  const body = chatBody(tokens);
  const t = new Tally();
  const one = (k: number) =>
    new Promise<void>((resolve, reject) => {
      const id = `${tag}-${k}`;
      const a = t.open(id);
      const sock = net.createConnection({ port, host: '127.0.0.1', noDelay: true });
      let carry = Buffer.alloc(0);
      let head = true;
      let tail = '';
      sock.on('connect', () => {
        sock.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${id}\r\n\r\n${body}`);
      });
      sock.on('data', (d: Buffer) => {
        const now = mono();
        if (head) {
          head = false;
          if (d.toString('latin1', 0, 12) !== 'HTTP/1.1 200') {
            reject(new Error(`${id}: ${d.toString('latin1', 0, 200)}`));
            sock.destroy();
            return;
          }
        }
        const buf = carry.length ? Buffer.concat([carry, d]) : d;
        const from = carry.length;
        let n = 0;
        for (let i = buf.indexOf(CONTENT); i >= 0; i = buf.indexOf(CONTENT, i + 1)) {
          const look = i + CONTENT.length;
          if (look >= buf.length) break;
          if (look >= from && buf[look] !== QUOTE) n++;
        }
        carry = Buffer.from(buf.subarray(Math.max(0, buf.length - CONTENT.length)));
        t.count(a, now, n);
        tail = (tail + d.toString('latin1', Math.max(0, d.length - 1024))).slice(-1024);
        if (buf.indexOf(END, Math.max(0, buf.length - END.length)) >= 0) {
          t.usage(tail);
          sock.end();
          resolve();
        }
      });
      sock.on('error', reject);
    });
  const run = await runAll(streams, one);
  return { ...t.result(), ...run };
}

/** Through Portico with node:http (the earlier bench's client): utf8 decoding, HTTP parser, chunked decoding. */
export async function viaNodeHttp(port: number, streams: number, tokens: number, tag = 'via'): Promise<ViaResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4096 });
  const body = chatBody(tokens);
  const t = new Tally();
  const one = (k: number) =>
    new Promise<void>((resolve, reject) => {
      const id = `${tag}-${k}`;
      const a = t.open(id);
      const req = http.request(`http://127.0.0.1:${port}/v1/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': id } }, (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`status ${res.statusCode}`));
          return;
        }
        res.setEncoding('utf8');
        let tail = '';
        res.on('data', (text: string) => {
          const now = mono();
          let n = 0;
          for (let i = text.indexOf('"content":"'); i >= 0; i = text.indexOf('"content":"', i + 1)) if (text[i + 11] !== '"') n++;
          tail = (tail + text).slice(-512);
          t.count(a, now, n);
        });
        res.on('end', () => {
          t.usage(tail);
          resolve();
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  const run = await runAll(streams, one);
  agent.destroy();
  return { ...t.result(), ...run };
}

/**
 * Per-token latency (client arrival − engine emission), one value per delivered read unit:
 * - direct: every token id is its own unit (a read of n ids gives n latencies);
 * - through Portico (`model` given): every content delta; its latency is measured from the
 *   emission of the last token it carries. Which tokens end a delta is replayed with
 *   Portico's own incremental detokenizer over the engine's token ids (a token whose text
 *   is held back, such as half a UTF-8 character, has no delta of its own), so holding back
 *   is not counted as transport delay.
 * Streams whose delta count does not match the replay are counted in `mismatched` and left out.
 */
export function latencies(all: Map<string, Arrivals>, trace: Trace, model?: Model, maxTokens?: number): { lat: number[]; mismatched: number; missing: number } {
  const lat: number[] = [];
  let mismatched = 0;
  let missing = 0;
  for (const [id, a] of all) {
    const t = trace[id];
    if (!t) {
      missing++;
      continue;
    }
    // Emission time of each unit's last token.
    let ends: number[];
    if (model) {
      ends = [];
      const seq = newSequence(model, { skipSpecialTokens: true, ignoreEos: true, maxTokens });
      for (let i = 0; i < t.length; i += 2) {
        const r = seq.pushToken(t[i + 1]!);
        const text = typeof r === 'string' ? r : r[0];
        if (text) ends.push(t[i]!);
      }
      const rest = seq.finish();
      if (rest) ends.push(t[t.length - 2]!);
    } else {
      ends = [];
      for (let i = 0; i < t.length; i += 2) ends.push(t[i]!);
    }
    const r = a.reads;
    let units = 0;
    for (let i = 1; i < r.length; i += 2) units += r[i]!;
    if (units !== ends.length) {
      mismatched++;
      continue;
    }
    let u = 0;
    for (let i = 0; i < r.length; i += 2) for (let k = 0; k < r[i + 1]!; k++) lat.push(r[i]! - ends[u++]!);
  }
  return { lat, mismatched, missing };
}
