// --chat-template FILE (vLLM's flag): the template that replaces (or supplies) the model
// folder's, rendered by the same native engine. A `.json` file is read as tokenizer_config
// does it (its `chat_template`: a string or a list of named templates); any other file is
// the Jinja template itself.

import { readFileSync } from 'node:fs';

/** The JSON text of the `chat_template` value FILE holds. */
export function chatTemplateOverride(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read --chat-template ${file}: ${(err as Error).message}`);
  }
  if (!/\.json$/i.test(file)) return JSON.stringify(text);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new Error(`--chat-template ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const t = v && typeof v === 'object' && !Array.isArray(v) ? (v as { chat_template?: unknown }).chat_template : undefined;
  if (typeof t !== 'string' && !Array.isArray(t)) throw new Error(`--chat-template ${file}: expected a JSON object with a "chat_template" string or list of named templates`);
  return JSON.stringify(t);
}
