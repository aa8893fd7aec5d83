// One server for the tests of one file: node:test hooks start it before the file's tests
// and stop it after them, with the SDK client the tests call it through.

import { before, after } from 'node:test';
import { startPortico, type Proc } from './portico.js';

/** The server and a client of it; the fields are readable once the file's tests run. */
export interface Served<C> {
  readonly server: Proc;
  readonly client: C;
}

/**
 * Registers the hooks that start `portico <args>` before the file's tests and stop it
 * after them (call it at the top level of a test file). `makeClient` builds the SDK client
 * from the server's base URL; a file that calls the server with fetch alone leaves it out
 * and reads `server.url`.
 */
export function useServer(args: string[]): Served<undefined>;
export function useServer<C>(args: string[], makeClient: (url: string) => C): Served<C>;
export function useServer<C>(args: string[], makeClient?: (url: string) => C): Served<C | undefined> {
  let server: Proc | undefined;
  let client: C | undefined;
  before(async () => {
    server = await startPortico(args);
    client = makeClient?.(server.url);
  });
  after(async () => {
    await server?.stop();
  });
  return {
    get server() {
      if (!server) throw new Error('server not started: read it inside a test');
      return server;
    },
    get client() {
      if (!server) throw new Error('server not started: read it inside a test');
      return client;
    },
  };
}
