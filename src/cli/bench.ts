// `portico bench`: an LLM load generator. Closed loop (fixed concurrency) or open loop
// (Poisson arrivals), streaming or not, with synthetic prompts of a chosen length and an
// optional shared prefix; reports throughput and latency percentiles.

import { mulberry32 } from '../mock/token-policy.js';

export interface BenchOptions {
  url: string;
  model?: string;
  endpoint: 'chat' | 'completions';
  apiKey?: string;
  concurrency: number;
  requests: number;
  rate: number;
  isl: number;
  osl: number;
  sharedPrefix: number;
  prefixes: number;
  stream: boolean;
  seed: number;
}

interface Sample {
  ok: boolean;
  e2e: number;
  ttft: number | null;
  itls: number[];
  outputTokens: number;
  promptTokens: number;
  cachedTokens: number;
  error?: string;
}

export interface BenchSummary {
  requests: number;
  failed: number;
  durationS: number;
  requestsPerS: number;
  outputTokensPerS: number;
  promptTokens: number;
  cachedTokens: number;
  ttftMs: Percentiles | null;
  itlMs: Percentiles | null;
  e2eMs: Percentiles;
  firstError?: string;
}

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  mean: number;
}

function percentiles(xs: number[]): Percentiles {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  const round = (v: number) => Math.round(v * 1000) / 1000;
  return { p50: round(at(0.5)), p90: round(at(0.9)), p99: round(at(0.99)), mean: round(s.reduce((a, b) => a + b, 0) / (s.length || 1)) };
}

const WORDS = 'time person year way day thing man world life hand part child eye woman place work week case point government company number group problem fact river light stone music cloud garden paper window engine market story'.split(' ');

function words(rand: () => number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(rand() * WORDS.length)]);
  return out.join(' ');
}

async function defaultModel(o: BenchOptions, headers: Record<string, string>): Promise<string> {
  const res = await fetch(`${o.url}/v1/models`, { headers });
  if (!res.ok) throw new Error(`GET /v1/models answered ${res.status}`);
  const body = (await res.json()) as { data: { id: string }[] };
  if (!body.data.length) throw new Error('the server lists no models');
  return body.data[0].id;
}

async function one(o: BenchOptions, model: string, headers: Record<string, string>, prefix: string, text: string): Promise<Sample> {
  const path = o.endpoint === 'chat' ? '/v1/chat/completions' : '/v1/completions';
  const common = { model, max_tokens: o.osl, ignore_eos: true, stream: o.stream, ...(o.stream ? { stream_options: { include_usage: true } } : {}) };
  const body =
    o.endpoint === 'chat'
      ? { ...common, messages: [...(prefix ? [{ role: 'system', content: prefix }] : []), { role: 'user', content: text }] }
      : { ...common, prompt: prefix ? `${prefix}\n${text}` : text };
  const t0 = performance.now();
  let ttft: number | null = null;
  const itls: number[] = [];
  try {
    const res = await fetch(`${o.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (!res.ok) return { ok: false, e2e: performance.now() - t0, ttft, itls, outputTokens: 0, promptTokens: 0, cachedTokens: 0, error: `${res.status} ${(await res.text()).slice(0, 200)}` };
    if (!o.stream) {
      const j = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: number } } };
      return { ok: true, e2e: performance.now() - t0, ttft, itls, outputTokens: j.usage.completion_tokens, promptTokens: j.usage.prompt_tokens, cachedTokens: j.usage.prompt_tokens_details?.cached_tokens ?? 0 };
    }
    let last = 0;
    let usage = { prompt_tokens: 0, completion_tokens: 0, prompt_tokens_details: { cached_tokens: 0 } };
    const decoder = new TextDecoder();
    let buf = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      const now = performance.now();
      buf += decoder.decode(chunk, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const ev = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (!ev.startsWith('data: {')) continue;
        const j = JSON.parse(ev.slice(6)) as { choices: { delta?: { content?: string }; text?: string }[]; usage?: typeof usage };
        if (j.usage) usage = { ...usage, ...j.usage };
        const c = j.choices[0];
        if (c && (c.delta?.content || c.text)) {
          if (ttft === null) ttft = now - t0;
          else itls.push(now - last);
          last = now;
        }
      }
    }
    return { ok: true, e2e: performance.now() - t0, ttft, itls, outputTokens: usage.completion_tokens, promptTokens: usage.prompt_tokens, cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? 0 };
  } catch (err) {
    return { ok: false, e2e: performance.now() - t0, ttft, itls, outputTokens: 0, promptTokens: 0, cachedTokens: 0, error: (err as Error).message };
  }
}

export async function runBench(o: BenchOptions): Promise<BenchSummary> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}) };
  const model = o.model ?? (await defaultModel(o, headers));
  const rand = mulberry32(o.seed); // deterministic, so runs are repeatable
  // Roughly one token per word for these common English words.
  const prefixes = Array.from({ length: o.prefixes }, (_, i) => (o.sharedPrefix > 0 ? `[${i}] ${words(rand, o.sharedPrefix)}` : ''));
  const prompts = Array.from({ length: o.requests }, () => ({ prefix: prefixes[Math.floor(rand() * prefixes.length)], text: words(rand, Math.max(1, o.isl - o.sharedPrefix)) }));

  const samples: Sample[] = [];
  const t0 = performance.now();
  let next = 0;
  if (o.rate > 0) {
    const inflight: Promise<void>[] = [];
    let at = t0;
    for (const p of prompts) {
      at += (-Math.log(1 - rand()) / o.rate) * 1000;
      const wait = at - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inflight.push(one(o, model, headers, p.prefix, p.text).then((s) => void samples.push(s)));
    }
    await Promise.all(inflight);
  } else {
    const workers = Array.from({ length: Math.min(o.concurrency, prompts.length) }, async () => {
      while (next < prompts.length) {
        const p = prompts[next++];
        samples.push(await one(o, model, headers, p.prefix, p.text));
      }
    });
    await Promise.all(workers);
  }
  const durationS = (performance.now() - t0) / 1000;
  const ok = samples.filter((s) => s.ok);
  const ttfts = ok.map((s) => s.ttft).filter((x): x is number => x !== null);
  const itls = ok.flatMap((s) => s.itls);
  const outputTokens = ok.reduce((a, s) => a + s.outputTokens, 0);
  return {
    requests: samples.length,
    failed: samples.length - ok.length,
    durationS: Math.round(durationS * 1000) / 1000,
    requestsPerS: Math.round((ok.length / durationS) * 100) / 100,
    outputTokensPerS: Math.round((outputTokens / durationS) * 10) / 10,
    promptTokens: ok.reduce((a, s) => a + s.promptTokens, 0),
    cachedTokens: ok.reduce((a, s) => a + s.cachedTokens, 0),
    ttftMs: ttfts.length ? percentiles(ttfts) : null,
    itlMs: itls.length ? percentiles(itls) : null,
    e2eMs: percentiles(ok.map((s) => s.e2e)),
    firstError: samples.find((s) => !s.ok)?.error,
  };
}

export function formatSummary(s: BenchSummary): string {
  const row = (name: string, p: Percentiles | null) => (p ? `${name.padEnd(12)} p50 ${p.p50} ms   p90 ${p.p90} ms   p99 ${p.p99} ms   mean ${p.mean} ms\n` : '');
  const hit = s.promptTokens > 0 ? ((100 * s.cachedTokens) / s.promptTokens).toFixed(1) : '0.0';
  return (
    `requests     ${s.requests} (${s.failed} failed) in ${s.durationS} s\n` +
    `throughput   ${s.requestsPerS} req/s, ${s.outputTokensPerS} output tokens/s\n` +
    `prompt       ${s.promptTokens} tokens, ${s.cachedTokens} cached (${hit}%)\n` +
    row('TTFT', s.ttftMs) +
    row('ITL', s.itlMs) +
    row('end to end', s.e2eMs) +
    (s.firstError ? `first error  ${s.firstError}\n` : '')
  );
}
