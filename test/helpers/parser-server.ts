// The server the parser e2e tests (chat, Responses, Anthropic Messages) share: one echo
// engine behind the hermes tool-call and qwen3 reasoning parsers. With
// nvext.use_raw_prompt the echo engine returns the text sent, so the model's "output" is
// chosen by the test and tokenized by the real Qwen3 tokenizer, as a model's would be.

import { before, after } from 'node:test';
import { startPortico, QWEN3, type Proc } from './portico.js';

export function startParserServer(): Promise<Proc> {
  return startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--mock', 'echo', '--mock-workers', '1', '--tool-call-parser', 'hermes', '--reasoning-parser', 'qwen3']);
}

/** The parser server and a client of it, for the tests of one file. */
export interface ParserServer<C> {
  readonly server: Proc;
  readonly client: C;
}

/**
 * Starts the parser server before the file's tests and stops it after them (node:test
 * hooks, so call it at the top level of a test file). `makeClient` builds the SDK client
 * from the server's base URL. The returned object's fields are readable once the tests run.
 */
export function useParserServer<C>(makeClient: (url: string) => C): ParserServer<C> {
  let server: Proc | undefined;
  let client: C | undefined;
  before(async () => {
    server = await startParserServer();
    client = makeClient(server.url);
  });
  after(async () => {
    await server?.stop();
  });
  return {
    get server() {
      if (!server) throw new Error('parser server not started: read it inside a test');
      return server;
    },
    get client() {
      if (client === undefined) throw new Error('parser server not started: read it inside a test');
      return client;
    },
  };
}

export const REASONING = 'The user wants weather; call the tool.';
/** Reasoning, then text, then two hermes tool calls (get_weather for Paris, 3 days, and Rome). */
export const OUTPUT = `<think>${REASONING}</think>Let me check.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>`;
