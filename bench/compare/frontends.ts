// How bench/compare and bench/real-engine start each frontend in front of an engine, and
// know it is ready. Portico and SMG sit in front of the same out-of-process engine (Portico's
// mock engine in bench/compare, a vLLM CPU worker in bench/real-engine); Dynamo's frontend
// needs its own mocker (Dynamo's discovery), started here too.

import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';

export interface Running {
  name: string;
  url: string;
  /** The frontend process (its tree is measured). */
  pid: number;
  stop(): Promise<void>;
}

export interface Env {
  root: string;
  venv: string;
  modelDir: string;
  /** The engine worker as Portico's --worker takes it: grpc://HOST:PORT (SGLang's protocol) or vllm+grpc://HOST:PORT (vLLM's). */
  worker: string;
  logDir: string;
  /** CPUs the frontend is pinned to (taskset -c LIST); unset, not pinned. */
  cpus?: string;
  /** CPUs an engine a frontend brings along (Dynamo's mocker) is pinned to; unset, not pinned. */
  engineCpus?: string;
  /** Extra `portico serve` arguments. */
  porticoArgs?: string[];
  /** Node options Portico's process starts with (before bin/portico.js), for A/Bs of V8 flags. */
  nodeArgs?: string[];
}

/** The node options of a `Portico^FLAGS` frontend name (FLAGS space-separated); none for any other name. */
export function nodeFlagsOf(name: string): string[] {
  const i = name.indexOf('^');
  return i < 0 ? [] : name.slice(i + 1).split(' ').filter(Boolean);
}

/** Tool-call parser of each frontend for the Qwen3 model (its hermes-style <tool_call> JSON): Portico's and Dynamo's `hermes`, SMG's `qwen`. */
export const TOOL_PARSERS = { portico: 'hermes', smg: 'qwen', dynamo: 'hermes' } as const;

/** Starts cmd, logging to `log`; with `cpus`, through taskset, which execs it (the pid is cmd's). */
function start(cmd: string, args: string[], log: string, env: NodeJS.ProcessEnv = {}, cpus?: string): ChildProcess {
  const fd = openSync(log, 'a');
  const full: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const k of Object.keys(full)) if (full[k] === undefined) delete full[k];
  return cpus ? spawn('taskset', ['-c', cpus, cmd, ...args], { stdio: ['ignore', fd, fd], env: full }) : spawn(cmd, args, { stdio: ['ignore', fd, fd], env: full });
}

/** SMG's worker URL and --backend for the engine: it takes grpc:// for both protocols and is told which one the worker speaks. */
function smgWorker(worker: string): string[] {
  const vllm = worker.startsWith('vllm+grpc://');
  return ['--worker-urls', vllm ? worker.slice('vllm+'.length) : worker, '--backend', vllm ? 'vllm' : 'sglang'];
}

async function stopChild(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  const done = new Promise<void>((r) => c.once('exit', () => r()));
  c.kill('SIGTERM');
  const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
  await done;
  clearTimeout(t);
}

/** Polls GET /v1/models until it lists a model and a 1-token chat succeeds (SMG answers 503 while its tokenizer loads). */
export async function waitReady(url: string, child: ChildProcess, log: string, timeoutMs = 120_000, helpers: [ChildProcess, string][] = []): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode} before it was ready; see ${log}`);
    for (const [h, hlog] of helpers) if (h.exitCode !== null) throw new Error(`its engine exited with ${h.exitCode} before the frontend was ready; see ${hlog}`);
    try {
      const m = (await (await fetch(`${url}/v1/models`)).json()) as { data?: { id: string }[] };
      const model = m.data?.[0]?.id;
      if (model) {
        const r = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }) });
        if (r.ok) return model;
        last = `${r.status} ${(await r.text()).slice(0, 200)}`;
      }
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`not ready in ${timeoutMs / 1000} s (last: ${last}); see ${log}`);
}

/**
 * A `portico mock-engine` simulating an engine with no delays (sim, speed-up 10^6, no EOS), on
 * `port`, pinned to `cpus` when given; resolves once it has printed its address.
 */
export async function startSimEngine(root: string, modelDir: string, port: number, cpus?: string): Promise<ChildProcess> {
  const args = [process.execPath, `${root}bin/portico.js`, 'mock-engine', '--port', String(port), '--model-path', modelDir, '--mode', 'sim', '--speedup-ratio', '1000000', '--eos-probability', '0'];
  const engine = cpus ? spawn('taskset', ['-c', cpus, ...args], { stdio: ['ignore', 'pipe', 'inherit'] }) : spawn(args[0]!, args.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => engine.stdout!.once('data', () => resolve()));
  return engine;
}

export async function startPortico(e: Env, port: number, tools = false): Promise<Running> {
  const log = `${e.logDir}/portico.log`;
  const parser = tools ? ['--tool-call-parser', TOOL_PARSERS.portico] : [];
  const c = start(process.execPath, [...(e.nodeArgs ?? []), `${e.root}/bin/portico.js`, 'serve', '--host', '127.0.0.1', '--http-port', String(port), '--model-path', e.modelDir, '--worker', e.worker, '--log-level', 'error', ...(e.porticoArgs ?? []), ...parser], log, {}, e.cpus);
  const url = `http://127.0.0.1:${port}`;
  await waitReady(url, c, log);
  return { name: e.nodeArgs?.length ? `Portico^${e.nodeArgs.join(' ')}` : 'Portico', url, pid: c.pid!, stop: () => stopChild(c) };
}

export async function startSmg(e: Env, port: number, tools = false): Promise<Running> {
  const log = `${e.logDir}/smg.log`;
  const parser = tools ? ['--tool-call-parser', TOOL_PARSERS.smg] : [];
  const c = start(`${e.venv}/bin/smg`, ['launch', '--host', '127.0.0.1', '--port', String(port), '--prometheus-port', String(port + 1), ...smgWorker(e.worker), '--model-path', e.modelDir, '--tokenizer-path', e.modelDir, '--policy', 'round_robin', '--reasoning-parser', 'passthrough', '--log-level', 'error', ...parser], log, {}, e.cpus);
  const url = `http://127.0.0.1:${port}`;
  await waitReady(url, c, log);
  return { name: 'SMG', url, pid: c.pid!, stop: () => stopChild(c) };
}

let dynamoStarts = 0; // each start gets its own discovery folder: no stale registration of a stopped mocker

/** Dynamo's frontend and its mocker, file discovery, TCP request plane, ZMQ event plane. With `tools`, the mocker is started through bench/compare/dynamo-mocker-tools.py, which puts the tool-call parser in the model's runtime config as a real worker's --dyn-tool-call-parser does (1.6.1's mocker has no flag for it). */
export async function startDynamo(e: Env, port: number, tools = false): Promise<Running> {
  const log = `${e.logDir}/dynamo.log`;
  // RUST_BACKTRACE unset: with it set, Dynamo's runtime captures a backtrace per error (slow).
  // DYN_LOG=warn: at its default (info) the frontend logs a line per response.
  const env: NodeJS.ProcessEnv = { DYN_FILE_KV: `${e.logDir}/dynamo-discovery-${++dynamoStarts}`, DYN_LOG: 'warn', RUST_BACKTRACE: undefined, ...(tools ? { PORTICO_COMPARE_DYN_TOOL_PARSER: TOOL_PARSERS.dynamo } : {}) };
  const planes = ['--discovery-backend', 'file', '--request-plane', 'tcp', '--event-plane', 'zmq'];
  const mockerLog = `${e.logDir}/dynamo-mocker.log`;
  const entry = tools ? [`${e.root}/bench/compare/dynamo-mocker-tools.py`] : ['-m', 'dynamo.mocker'];
  const mocker = start(`${e.venv}/bin/python`, [...entry, '--model-path', e.modelDir, '--speedup-ratio', '1000000', ...planes], mockerLog, env, e.engineCpus);
  const fe = start(`${e.venv}/bin/python`, ['-m', 'dynamo.frontend', '--http-host', '127.0.0.1', '--http-port', String(port), ...planes], log, env, e.cpus);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(url, fe, log, 180_000, [[mocker, mockerLog]]);
  } catch (err) {
    await stopChild(fe);
    await stopChild(mocker);
    throw err;
  }
  return { name: 'Dynamo 1.6.1', url, pid: fe.pid!, stop: async () => { await stopChild(fe); await stopChild(mocker); } };
}

/**
 * The architecture's floor (bench/floor-servers.ts `uws-h2`): a uWS app that answers each POST
 * with one Generate call to the engine over a kept-alive node:http2 session and a fixed chat
 * completion. No template, tokenizer, router or parser: what one request costs a Node
 * frontend of this shape before any of Portico's own work.
 */
export async function startFloor(e: Env, port: number): Promise<Running> {
  const log = `${e.logDir}/floor.log`;
  const enginePort = new URL(e.worker.replace(/^[a-z+]+:/, 'http:')).port;
  const c = start(process.execPath, [`${e.root}/dist/bench/floor-servers.js`, 'uws-h2', String(port), enginePort], log, {}, e.cpus);
  const url = `http://127.0.0.1:${port}`;
  await waitReady(url, c, log);
  return { name: 'floor', url, pid: c.pid!, stop: () => stopChild(c) };
}
