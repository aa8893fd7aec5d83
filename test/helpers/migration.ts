// What the request-migration end-to-end tests share: deterministic mock engines as child
// processes (`portico mock-engine --mode sim --deterministic`, either protocol), a frontend
// over them with the qwen3 reasoning and hermes tool parsers, the admin calls that add and
// remove workers, and requests whose whole outcome (every choice's content, reasoning, tool
// calls and finish reason, and the usage) is read into one value to compare with its
// uninterrupted twin.

import { once } from 'node:events';
import { startPortico, QWEN3, type Proc } from './portico.js';
import { eventually } from './eventually.js';
import { seriesOf } from './metrics-text.js';

export type Protocol = 'sglang' | 'vllm';

export interface Engine {
  proc: Proc;
  port: number;
  url: string;
  protocol: Protocol;
}

/** Simulated ms per decode step: requests last long enough to be cut, short enough to keep the files quick. */
export const STEP_MS = 15;

export async function startEngine(protocol: Protocol, extra: string[] = [], port = 0): Promise<Engine> {
  const proc = await startPortico(['mock-engine', '--port', String(port), '--model-path', QWEN3, '--mode', 'sim', '--deterministic', '--protocol', protocol, '--step-ms', String(STEP_MS), ...extra]);
  return { proc, port: proc.port, url: `${protocol === 'vllm' ? 'vllm+grpc' : 'grpc'}://127.0.0.1:${proc.port}`, protocol };
}

/** SIGKILL: the worker dies with its streams open. */
export async function killEngine(e: Engine): Promise<void> {
  const c = e.proc.child;
  if (c.exitCode !== null || c.signalCode !== null) return;
  c.kill('SIGKILL');
  await once(c, 'exit');
}

/** Resolves when the child has exited (a SIGTERM drain ends in its exit). */
export async function exited(p: Proc): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  await once(p.child, 'exit');
}

export async function startFrontend(workers: string[], extra: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Proc> {
  return startPortico([
    'serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm',
    ...workers.flatMap((w) => ['--worker', w]),
    '--tool-call-parser', 'hermes', '--reasoning-parser', 'qwen3', '--health-check-interval-secs', '0.5',
    ...extra,
  ], env);
}

export interface WorkerRow {
  id: number;
  url: string;
  healthy: boolean;
}

export async function workers(s: Proc): Promise<WorkerRow[]> {
  const r = await fetch(`${s.url}/admin/workers`);
  return ((await r.json()) as { models: { workers: WorkerRow[] }[] }).models[0]!.workers;
}

export async function addWorker(s: Proc, url: string): Promise<number> {
  const r = await fetch(`${s.url}/admin/workers`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
  if (r.status !== 201) throw new Error(`POST /admin/workers ${url}: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { worker: { id: number } }).worker.id;
}

export async function removeWorker(s: Proc, id: number): Promise<void> {
  const r = await fetch(`${s.url}/admin/workers/${id}`, { method: 'DELETE' });
  if (r.status !== 200) throw new Error(`DELETE /admin/workers/${id}: ${r.status} ${await r.text()}`);
}

/** Waits until the frontend has `n` workers and all of them in rotation. */
export async function healthyWorkers(s: Proc, n: number): Promise<void> {
  await eventually(async () => {
    const w = await workers(s);
    return w.length === n && w.every((x) => x.healthy);
  }, `${n} healthy workers`);
}

/** portico_frontend_model_migration_total by "migration_type/reason", and the exhausted count. */
export async function migrationCounts(s: Proc): Promise<{ moved: Record<string, number>; total: number; exhausted: number }> {
  const series = seriesOf(await (await fetch(`${s.url}/metrics`)).text());
  const moved: Record<string, number> = {};
  let total = 0;
  let exhausted = 0;
  for (const [k, v] of series) {
    const m = /^portico_frontend_model_migration_total\{.*migration_type="([a-z_]+)",reason="([a-z_]+)"\}$/.exec(k);
    if (m) {
      moved[`${m[1]}/${m[2]}`] = v;
      total += v;
    }
    if (k.startsWith('portico_frontend_model_migration_exhausted_total{')) exhausted += v;
  }
  return { moved, total, exhausted };
}

// Requests and their outcomes.

export interface Req {
  path: '/v1/chat/completions' | '/v1/completions';
  body: Record<string, unknown>;
}

export interface ChoiceOutcome {
  content: string;
  reasoning: string;
  tools: { name: string; arguments: string }[];
  finish: string | null;
}

export interface Outcome {
  status: number;
  choices: Record<number, ChoiceOutcome>;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  /** An error body or error event, verbatim. */
  error?: string;
}

export const TOOLS = [
  { type: 'function', function: { name: 'get_weather', description: 'The weather of a city', parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } } } } },
  { type: 'function', function: { name: 'search_docs', description: 'Search the documentation', parameters: { type: 'object', properties: { query: { type: 'string' } } } } },
];

function choice(all: Record<number, ChoiceOutcome>, i: number): ChoiceOutcome {
  return (all[i] ??= { content: '', reasoning: '', tools: [], finish: null });
}

interface Chunk {
  choices?: Array<{
    index: number;
    text?: string;
    finish_reason?: string | null;
    delta?: { content?: string | null; reasoning_content?: string | null; tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }> };
    message?: { content?: string | null; reasoning_content?: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> };
  }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  error?: unknown;
}

function usageOf(u: Chunk['usage']): Outcome['usage'] {
  return u ? { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.total_tokens } : null;
}

function assertCallId(id: string | undefined): void {
  if (!id || !/^call_/.test(id)) throw new Error(`a tool call without a call id: ${String(id)}`);
}

/**
 * Send `req` (streamed when its body says so) and read its whole outcome. `onEvent` is
 * called for every streamed data event (the tests time their kills by it).
 */
export async function send(base: string, req: Req, onEvent?: () => void): Promise<Outcome> {
  const r = await fetch(`${base}${req.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(req.body) });
  const out: Outcome = { status: r.status, choices: {}, usage: null };
  if (r.status !== 200) {
    out.error = await r.text();
    return out;
  }
  if (!req.body.stream) {
    const j = (await r.json()) as Chunk;
    for (const c of j.choices ?? []) {
      const o = choice(out.choices, c.index);
      o.content = c.message ? c.message.content ?? '' : c.text ?? '';
      o.reasoning = c.message?.reasoning_content ?? '';
      for (const t of c.message?.tool_calls ?? []) {
        assertCallId(t.id);
        o.tools.push({ name: t.function.name, arguments: t.function.arguments });
      }
      o.finish = c.finish_reason ?? null;
    }
    out.usage = usageOf(j.usage);
    return out;
  }
  const reader = r.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let done = false;
  const take = (block: string) => {
    if (/^event: error/m.test(block)) out.error = block;
    for (const line of block.split('\n')) {
      if (!line.startsWith('data: ')) continue;
      const data = line.slice(6);
      if (data === '[DONE]') {
        done = true;
        continue;
      }
      const j = JSON.parse(data) as Chunk;
      if (j.error) out.error = data;
      onEvent?.();
      for (const c of j.choices ?? []) {
        const o = choice(out.choices, c.index);
        o.content += c.delta ? c.delta.content ?? '' : c.text ?? '';
        o.reasoning += c.delta?.reasoning_content ?? '';
        for (const t of c.delta?.tool_calls ?? []) {
          const call = (o.tools[t.index] ??= { name: '', arguments: '' });
          if (t.function?.name) {
            assertCallId(t.id);
            call.name += t.function.name;
          }
          call.arguments += t.function?.arguments ?? '';
        }
        if (c.finish_reason) o.finish = c.finish_reason;
      }
      if (j.usage) out.usage = usageOf(j.usage);
    }
  };
  for (;;) {
    const { value, done: end } = await reader.read();
    if (end) break;
    buf += dec.decode(value, { stream: true });
    let at: number;
    while ((at = buf.indexOf('\n\n')) >= 0) {
      take(buf.slice(0, at));
      buf = buf.slice(at + 2);
    }
  }
  if (buf.trim()) take(buf);
  if (!done && !out.error) out.error = 'the stream ended without data: [DONE]';
  return out;
}

/** A chat request with the tools, streamed or not. */
export function chatReq(text: string, o: { stream: boolean; n?: number; maxTokens?: number; ignoreEos?: boolean; stop?: string[] }): Req {
  return {
    path: '/v1/chat/completions',
    body: {
      model: 'm',
      messages: [{ role: 'user', content: text }],
      tools: TOOLS,
      stream: o.stream,
      ...(o.stream ? { stream_options: { include_usage: true } } : {}),
      ...(o.n ? { n: o.n } : {}),
      ...(o.maxTokens ? { max_tokens: o.maxTokens } : {}),
      ...(o.ignoreEos ? { ignore_eos: true } : {}),
      ...(o.stop ? { stop: o.stop } : {}),
    },
  };
}

/** A completion request (a raw prompt: the script still holds reasoning and answer text). */
export function completionReq(text: string, o: { stream: boolean; n?: number; bestOf?: number; maxTokens?: number; ignoreEos?: boolean }): Req {
  return {
    path: '/v1/completions',
    body: {
      model: 'm',
      prompt: text,
      stream: o.stream,
      max_tokens: o.maxTokens ?? 200,
      ...(o.stream ? { stream_options: { include_usage: true } } : {}),
      ...(o.n ? { n: o.n } : {}),
      ...(o.bestOf ? { best_of: o.bestOf } : {}),
      ...(o.ignoreEos ? { ignore_eos: true } : {}),
    },
  };
}

/** Resolves once `p` printed a line matching `re`; its match. */
export async function printed(p: Proc, re: RegExp, what: string): Promise<RegExpExecArray> {
  let m: RegExpExecArray | null = null;
  await eventually(() => (m = re.exec(p.output())) !== null, what);
  return m!;
}
