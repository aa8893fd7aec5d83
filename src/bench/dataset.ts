// A JSONL dataset file for `portico bench --dataset FILE`. Each line is one of:
//  - ShareGPT style: {"conversations": [{"from": "system"|"human"|"gpt", "value": "..."}, ...]}
//    (also "messages" with role/content): every human turn becomes a turn of one session;
//    the reply that follows sets that turn's max_tokens when a tokenizer is given.
//  - an OpenAI request: {"messages": [...], ...} (chat) or {"prompt": "...", ...} (completions),
//    sent as it is except model and stream, which the run sets.
// Blank lines are skipped; anything else is an error that names the line.

import { readFileSync } from 'node:fs';
import type { Tokenizer } from './prompts.js';
import type { Session, Turn } from './session.js';

export class DatasetError extends Error {}

type ShareTurn = { from?: string; role?: string; value?: string; content?: string };

const USER = new Set(['human', 'user']);
const ASSISTANT = new Set(['gpt', 'assistant', 'chatgpt', 'bard', 'bing']);

function shareGpt(turns: ShareTurn[], where: string, outputTokens: number, tok: Tokenizer | undefined): Session {
  let system: string | undefined;
  const out: Turn[] = [];
  for (let i = 0; i < turns.length; i++) {
    const t = turns[i];
    const who = String(t.from ?? t.role ?? '').toLowerCase();
    const text = t.value ?? t.content;
    if (typeof text !== 'string') throw new DatasetError(`${where}: turn ${i} has no string "value" (or "content")`);
    if (who === 'system') system = text;
    else if (USER.has(who)) {
      const reply = turns[i + 1];
      const replyText = reply && ASSISTANT.has(String(reply.from ?? reply.role ?? '').toLowerCase()) ? (reply.value ?? reply.content) : undefined;
      const maxTokens = tok && typeof replyText === 'string' ? Math.max(1, tok.count(replyText)) : outputTokens;
      out.push({ kind: 'synthetic', system: out.length === 0 ? system : undefined, user: text, maxTokens });
    } else if (!ASSISTANT.has(who)) throw new DatasetError(`${where}: turn ${i} is from '${who}', not system, human/user or gpt/assistant`);
  }
  if (!out.length) throw new DatasetError(`${where}: the conversation has no human turn`);
  return { turns: out };
}

export function parseDatasetLine(line: string, where: string, outputTokens: number, tok: Tokenizer | undefined): Session {
  let j: unknown;
  try {
    j = JSON.parse(line);
  } catch (err) {
    throw new DatasetError(`${where}: not JSON (${(err as Error).message})`);
  }
  if (typeof j !== 'object' || j === null || Array.isArray(j)) throw new DatasetError(`${where}: not a JSON object`);
  const o = j as Record<string, unknown>;
  if (Array.isArray(o.conversations)) return shareGpt(o.conversations as ShareTurn[], where, outputTokens, tok);
  if (Array.isArray(o.messages) || typeof o.prompt === 'string' || Array.isArray(o.prompt)) {
    const body = { ...o };
    if (body.max_tokens === undefined && body.max_completion_tokens === undefined) body.max_tokens = outputTokens;
    return { turns: [{ kind: 'raw', body }] };
  }
  throw new DatasetError(`${where}: neither ShareGPT ("conversations") nor an OpenAI request ("messages" or "prompt")`);
}

export function loadDataset(file: string, outputTokens: number, tok: Tokenizer | undefined): Session[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new DatasetError(`cannot read dataset ${file}: ${(err as Error).message}`);
  }
  const sessions: Session[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim()) sessions.push(parseDatasetLine(line, `${file}:${i + 1}`, outputTokens, tok));
  });
  if (!sessions.length) throw new DatasetError(`dataset ${file} has no lines`);
  return sessions;
}
