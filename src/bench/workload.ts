// The sessions a run sends: each is one or more turns sent one after another, a later turn
// carrying the earlier turns and the answers actually received (multi-turn conversations
// over a shared system prompt). Synthetic sessions are made of exact-length prompts; a
// dataset supplies its own. Sessions are handed out in order and reused cyclically.

import type { Endpoint, WorkloadSpec } from './config.js';
import { loadDataset } from './dataset.js';
import type { Session, Turn } from './session.js';

export type { Session, Turn } from './session.js';
import { PromptMaker, type Tokenizer } from './prompts.js';


export interface Workload {
  /** The i-th session (cyclic). */
  session(i: number): Session;
  readonly distinct: number;
  /** The --tokenizer, when given (counts output tokens a server does not report). */
  readonly tokenizer?: Tokenizer;
}

/** Synthetic workloads need this many distinct sessions at most (enough variety, bounded build time). */
const MAX_DISTINCT = 2000;

export function buildWorkload(w: WorkloadSpec, wanted: number): Workload {
  const maker = w.tokenizer ? new PromptMaker(w.tokenizer, w.seed) : undefined;
  let sessions: Session[];
  if (w.dataset) sessions = loadDataset(w.dataset, w.outputTokens, maker);
  else {
    if (!maker) throw new Error('--tokenizer DIR is needed to make synthetic prompts of exact token lengths (or give --dataset FILE)');
    const prefixes = Array.from({ length: w.prefixes }, () => (w.sharedPrefix > 0 ? maker.text(w.sharedPrefix) : undefined));
    const userTokens = Math.max(1, w.inputTokens - w.sharedPrefix);
    const n = Math.max(1, Math.min(wanted, MAX_DISTINCT));
    sessions = [];
    for (let i = 0; i < n; i++) {
      const system = prefixes[i % prefixes.length];
      sessions.push({
        turns: Array.from({ length: w.turns }, (_, t) => ({ kind: 'synthetic' as const, system: t === 0 ? system : undefined, user: maker.text(userTokens), maxTokens: w.outputTokens })),
      });
    }
  }
  return { session: (i) => sessions[i % sessions.length], distinct: sessions.length, tokenizer: maker };
}

/** An exchange already done in this session: what was asked and what came back. */
export interface Exchange {
  user: string;
  assistant: string;
}

/** The JSON body of `turn`, after the session's earlier exchanges. */
export function requestBody(turn: Turn, history: readonly Exchange[], system: string | undefined, endpoint: Endpoint, model: string, stream: boolean): Record<string, unknown> {
  const streaming = stream ? { stream: true, stream_options: { include_usage: true } } : { stream: false };
  if (turn.kind === 'raw') return { ...turn.body, model, ...streaming };
  const common = { model, max_tokens: turn.maxTokens, ignore_eos: true, ...streaming };
  if (endpoint === 'chat') {
    const messages: { role: string; content: string }[] = system ? [{ role: 'system', content: system }] : [];
    for (const h of history) messages.push({ role: 'user', content: h.user }, { role: 'assistant', content: h.assistant });
    messages.push({ role: 'user', content: turn.user });
    return { ...common, messages };
  }
  const parts = system ? [system] : [];
  for (const h of history) parts.push(h.user, h.assistant);
  parts.push(turn.user);
  return { ...common, prompt: parts.join('\n') };
}
