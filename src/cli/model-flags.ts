// The served models as the command line and the config file give them: the one-model
// form (--model-path, --model-name), --model NAME=DIR (repeatable), a `models` array,
// --worker [NAME=]URL and --lora NAME=PATH@BASE. Conflicts and unknown names are usage
// errors here, before anything starts; bare worker URLs are assigned later, by the
// model name each worker reports (src/app/assign-workers.ts).

import { UsageError, type OptionValue } from './options.js';
import { defaultModelName, type LoraSpec, type ModelSpec } from '../app/options.js';

export interface ModelFlags {
  models: ModelSpec[];
  /** Bare worker URLs (no NAME=). */
  workers: string[];
  prefillWorkers: string[];
  decodeWorkers: string[];
  loras: LoraSpec[];
}

/** The three worker flags, their config keys and ModelSpec lists. */
const WORKER_FLAGS = [
  ['worker', 'workers'],
  ['prefill-worker', 'prefillWorkers'],
  ['decode-worker', 'decodeWorkers'],
] as const;

const MODEL_KEYS = new Set(['name', 'model-path', 'worker', 'prefill-worker', 'decode-worker', 'tool-call-parser', 'reasoning-parser', 'max-prompt-tokens', 'chat-template']);

/** `NAME=REST` where NAME holds no "://" (so a bare URL with '=' in its query is not split). */
function splitName(v: string): [string, string] | null {
  const eq = v.indexOf('=');
  if (eq <= 0) return null;
  const name = v.slice(0, eq);
  return name.includes('://') ? null : [name, v.slice(eq + 1)];
}

function configModel(x: Record<string, unknown>, i: number): ModelSpec {
  const where = `models[${i}]`;
  for (const k of Object.keys(x)) if (!MODEL_KEYS.has(k)) throw new UsageError(`${where}: unknown key '${k}' (known: ${[...MODEL_KEYS].join(', ')})`);
  const str = (k: string): string | undefined => {
    const v = x[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v === '') throw new UsageError(`${where}.${k} must be a non-empty string, got ${JSON.stringify(v)}`);
    return v;
  };
  const path = str('model-path');
  if (path === undefined) throw new UsageError(`${where}: 'model-path' is required`);
  const urls = (key: string): string[] => {
    const w = x[key];
    const list = w === undefined ? [] : typeof w === 'string' ? [w] : Array.isArray(w) && w.every((u) => typeof u === 'string') ? (w as string[]) : null;
    if (list === null) throw new UsageError(`${where}.${key} must be a URL or an array of URLs, got ${JSON.stringify(w)}`);
    return [...list];
  };
  const mpt = x['max-prompt-tokens'];
  if (mpt !== undefined && (!Number.isInteger(mpt) || (mpt as number) < 1)) throw new UsageError(`${where}.max-prompt-tokens must be an integer >= 1, got ${JSON.stringify(mpt)}`);
  return {
    name: str('name') ?? defaultModelName(path),
    path,
    workers: urls('worker'),
    prefillWorkers: urls('prefill-worker'),
    decodeWorkers: urls('decode-worker'),
    toolCallParser: str('tool-call-parser'),
    reasoningParser: str('reasoning-parser'),
    maxPromptTokens: mpt as number | undefined,
    chatTemplate: str('chat-template'),
  };
}

export function modelFlags(v: Record<string, OptionValue>): ModelFlags {
  const path = v['model-path'] as string | undefined;
  const name = v['model-name'] as string | undefined;
  const pairs = (v.model as string[] | undefined) ?? [];
  const listed = (v.models as Record<string, unknown>[] | undefined) ?? [];
  if (path !== undefined && (pairs.length > 0 || listed.length > 0)) {
    throw new UsageError(`--model-path serves one model and cannot be combined with ${pairs.length > 0 ? '--model' : 'a `models` list'}; give every model as --model NAME=DIR (or in \`models\`)`);
  }
  if (name !== undefined && path === undefined) throw new UsageError('--model-name names the --model-path model; with --model NAME=DIR the name is given there');

  const models: ModelSpec[] = [];
  if (path !== undefined) models.push({ name: name ?? defaultModelName(path), path, workers: [] });
  for (const p of pairs) {
    const kv = splitName(p);
    if (!kv || kv[1] === '') throw new UsageError(`--model must be NAME=DIR, got '${p}'`);
    models.push({ name: kv[0], path: kv[1], workers: [] });
  }
  listed.forEach((x, i) => models.push(configModel(x, i)));
  if (models.length === 0) throw new UsageError('no model: pass --model-path DIR (one model) or --model NAME=DIR (repeatable)');
  const byName = new Map<string, ModelSpec>();
  for (const m of models) {
    if (byName.has(m.name)) throw new UsageError(`model \`${m.name}\` is given twice`);
    byName.set(m.name, m);
  }

  const bare = { workers: [] as string[], prefillWorkers: [] as string[], decodeWorkers: [] as string[] };
  for (const [flag, list] of WORKER_FLAGS) {
    for (const w of (v[flag] as string[] | undefined) ?? []) {
      const kv = splitName(w);
      if (!kv) {
        bare[list].push(w);
        continue;
      }
      const m = byName.get(kv[0]);
      if (!m) throw new UsageError(`--${flag} ${w}: no model named \`${kv[0]}\` (served: ${[...byName.keys()].join(', ')})`);
      (m[list] ??= []).push(kv[1]);
    }
  }

  const loras: LoraSpec[] = [];
  for (const l of (v.lora as string[] | undefined) ?? []) {
    const kv = splitName(l);
    const at = kv ? kv[1].lastIndexOf('@') : -1;
    if (!kv || at <= 0 || at === kv[1].length - 1) throw new UsageError(`--lora must be NAME=PATH@BASE, got '${l}'`);
    const spec = { name: kv[0], path: kv[1].slice(0, at), base: kv[1].slice(at + 1) };
    if (!byName.has(spec.base)) throw new UsageError(`--lora ${l}: no base model named \`${spec.base}\` (served: ${[...byName.keys()].join(', ')})`);
    if (byName.has(spec.name) || loras.some((x) => x.name === spec.name)) throw new UsageError(`--lora ${l}: the name \`${spec.name}\` is already served`);
    loras.push(spec);
  }
  return { models, ...bare, loras };
}
