// The serve options of custom chat processors (spec 002) read off the command line:
// --chat-processor (PORTICO_CHAT_PROCESSOR, Dynamo's DYN_CHAT_PROCESSOR too), checked at
// argument parsing so that an unknown name fails before anything starts, with the
// registered names; --chat-processor-config (a JSON object); and the pre-commit peek's
// Dynamo-style environment names (PORTICO_/DYN_HTTP_PRE_COMMIT_ERROR_PEEK_MS), which
// set --stream-precommit-peek-ms when the flag itself is not given.

import { UsageError } from './options.js';
import { BUILT_IN, resolveProcessor, UnknownProcessorError } from '../processors/resolve.js';

export interface ProcessorChoice {
  chatProcessor?: string;
  chatProcessorConfig?: Record<string, unknown>;
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s.trim() === '' ? undefined : s.trim();
}

export async function readProcessorOptions(v: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Promise<ProcessorChoice> {
  const name = (v['chat-processor'] as string | undefined) ?? nonEmpty(env.DYN_CHAT_PROCESSOR);
  const raw = v['chat-processor-config'] as string | undefined;
  let config: Record<string, unknown> | undefined;
  if (raw !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (err) {
      throw new UsageError(`--chat-processor-config must be a JSON object: ${(err as Error).message}`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError('--chat-processor-config must be a JSON object');
    config = parsed as Record<string, unknown>;
  }
  if (name === undefined || name === BUILT_IN) {
    if (config !== undefined && name === undefined) throw new UsageError('--chat-processor-config needs --chat-processor');
    return { chatProcessor: name };
  }
  try {
    await resolveProcessor(name);
  } catch (err) {
    if (err instanceof UnknownProcessorError) throw new UsageError(`--chat-processor: ${err.message}`);
    throw err;
  }
  return { chatProcessor: name, chatProcessorConfig: config ?? {} };
}

/** --stream-precommit-peek-ms as given, else the Dynamo-style environment names; undefined: the default. */
export function precommitPeekMs(v: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const flag = v['stream-precommit-peek-ms'] as number | undefined;
  if (flag !== undefined) return flag;
  for (const k of ['PORTICO_HTTP_PRE_COMMIT_ERROR_PEEK_MS', 'DYN_HTTP_PRE_COMMIT_ERROR_PEEK_MS']) {
    const s = nonEmpty(env[k]);
    if (s === undefined) continue;
    const n = Number(s);
    if (!Number.isFinite(n) || n < 0) throw new UsageError(`${k} must be a number >= 0 (milliseconds), got '${s}'`);
    return n;
  }
  return undefined;
}
