// What one `portico bench` run is asked to do, after the command line is checked: the
// target, the load (closed or open loop, how long), the workload, and the output folder.
// Pure data and its parsers (--slo, --sweep); nothing here sends a request.

export type Endpoint = 'chat' | 'completions';

export interface Target {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:8000. */
  url: string;
  model: string;
  endpoint: Endpoint;
  apiKey?: string;
  stream: boolean;
  /** Per-request hang guard. */
  timeoutMs: number;
}

/** Closed loop (`concurrency` sessions in flight) or open loop (Poisson arrivals at `rate`/s, at most `maxConcurrency` in flight). */
export type Load = { kind: 'closed'; concurrency: number } | { kind: 'open'; rate: number; maxConcurrency: number };

export interface Limits {
  /** Counted requests to send (after warm-up); null: bounded by `durationS` only. */
  requests: number | null;
  /** Stop issuing new requests after this many seconds (those in flight finish and count); null: no limit. */
  durationS: number | null;
  /** Requests sent first and not counted. */
  warmup: number;
}

export interface WorkloadSpec {
  tokenizer?: string;
  inputTokens: number;
  outputTokens: number;
  sharedPrefix: number;
  prefixes: number;
  turns: number;
  dataset?: string;
  seed: number;
}

export interface Slo {
  ttftMs?: number;
  tpotMs?: number;
  e2eMs?: number;
}

export interface Sweep {
  param: 'concurrency' | 'rate';
  values: number[];
}

export interface BenchConfig {
  target: Target;
  load: Load;
  limits: Limits;
  workload: WorkloadSpec;
  slo: Slo;
  sweep?: Sweep;
  /** Folder for summary.json, requests.jsonl, report.html, report.png; none: print only. */
  output?: string;
  /** Live progress line on stderr (the CLI turns it on when stderr is a TTY). */
  progress: boolean;
}

export class ConfigError extends Error {}

/** `ttft:200,tpot:50,e2e:2000` (milliseconds) → Slo. */
export function parseSlo(text: string): Slo {
  const slo: Slo = {};
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^(ttft|tpot|e2e):(\d+(?:\.\d+)?)$/.exec(part);
    if (!m) throw new ConfigError(`--slo: '${part}' is not NAME:MS with NAME one of ttft, tpot, e2e (e.g. ttft:200,tpot:50)`);
    const ms = Number(m[2]);
    if (!(ms > 0)) throw new ConfigError(`--slo: ${m[1]} must be > 0 ms, got ${m[2]}`);
    if (m[1] === 'ttft') slo.ttftMs = ms;
    else if (m[1] === 'tpot') slo.tpotMs = ms;
    else slo.e2eMs = ms;
  }
  if (!Object.keys(slo).length) throw new ConfigError('--slo: give at least one of ttft:MS, tpot:MS, e2e:MS');
  return slo;
}

/** `concurrency:1,4,16` or `rate:5,10,20` → Sweep. */
export function parseSweep(text: string): Sweep {
  const m = /^(concurrency|rate):(.+)$/.exec(text.trim());
  if (!m) throw new ConfigError(`--sweep: '${text}' is not concurrency:N,N,... or rate:R,R,...`);
  const param = m[1] as Sweep['param'];
  const values = m[2].split(',').map((s) => Number(s.trim()));
  for (const v of values) {
    if (param === 'concurrency' ? !(Number.isInteger(v) && v >= 1) : !(Number.isFinite(v) && v > 0)) {
      throw new ConfigError(`--sweep: ${param} values must be ${param === 'concurrency' ? 'integers >= 1' : 'numbers > 0'}, got '${m[2]}'`);
    }
  }
  return { param, values };
}

/** The load of one sweep cell. */
export function cellLoad(base: Load, sweep: Sweep, value: number): Load {
  if (sweep.param === 'concurrency') return { kind: 'closed', concurrency: value };
  return { kind: 'open', rate: value, maxConcurrency: base.kind === 'open' ? base.maxConcurrency : Number.MAX_SAFE_INTEGER };
}
