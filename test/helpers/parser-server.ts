// The server the parser e2e tests (chat, Responses, Anthropic Messages) share: one echo
// engine behind the hermes tool-call and qwen3 reasoning parsers. With
// nvext.use_raw_prompt the echo engine returns the text sent, so the model's "output" is
// chosen by the test and tokenized by the real Qwen3 tokenizer, as a model's would be.

import { startPortico, QWEN3, type Proc } from './portico.js';
import { useServer, type Served } from './use-server.js';

const ARGS = ['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1', '--tool-call-parser', 'hermes', '--reasoning-parser', 'qwen3'];

export function startParserServer(): Promise<Proc> {
  return startPortico(ARGS);
}

/** The parser server for the tests of one file (hooks registered; see useServer). */
export function useParserServer<C>(makeClient: (url: string) => C): Served<C> {
  return useServer(ARGS, makeClient);
}

export const REASONING = 'The user wants weather; call the tool.';
/** Reasoning, then text, then two hermes tool calls (get_weather for Paris, 3 days, and Rome). */
export const OUTPUT = `<think>${REASONING}</think>Let me check.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>`;
