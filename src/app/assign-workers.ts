// Bare --worker URLs (no NAME=) join a model: with one model, that model; with several,
// the model whose name the worker's GetModelInfo reports (served_model_name). A worker
// that cannot say, or names a model not served here, is a startup error naming both.

import { createEngineClient } from '../engine/factory.js';
import type { ModelSpec } from './options.js';

const ASK_TIMEOUT_MS = 10_000;

type WorkerList = 'workers' | 'prefillWorkers' | 'decodeWorkers';

/** The model each bare worker serves, asked over GetModelInfo. Mutates `models` (their `list`: workers, prefill or decode workers). */
export async function assignWorkers(models: ModelSpec[], bare: string[], list: WorkerList = 'workers'): Promise<void> {
  if (bare.length === 0) return;
  if (models.length === 1) {
    (models[0]![list] ??= []).push(...bare);
    return;
  }
  const byName = new Map(models.map((m) => [m.name, m]));
  const served = [...byName.keys()].join(', ');
  const names = await Promise.all(bare.map((url) => servedName(url)));
  bare.forEach((url, i) => {
    const name = names[i]!;
    const m = byName.get(name);
    if (!m) throw new Error(`--worker ${url} serves model \`${name}\` (its GetModelInfo served_model_name), which is not one of the served models (${served}); assign it with --worker NAME=${url}`);
    (m[list] ??= []).push(url);
  });
}

async function servedName(url: string): Promise<string> {
  const client = createEngineClient(url);
  let timer: NodeJS.Timeout | undefined;
  try {
    const info = await Promise.race([
      client.modelInfo(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer in ${ASK_TIMEOUT_MS / 1000} s`)), ASK_TIMEOUT_MS);
      }),
    ]);
    return info.servedModelName;
  } catch (err) {
    throw new Error(`--worker ${url}: cannot ask it which model it serves (GetModelInfo: ${(err as Error).message}); with several models, assign it with --worker NAME=${url}`);
  } finally {
    clearTimeout(timer);
    client.close();
  }
}
