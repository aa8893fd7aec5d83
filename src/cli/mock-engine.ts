// `portico mock-engine`: a standalone GPU-free worker for tests and benchmarks.

import { resolve } from 'node:path';
import { basename } from 'node:path';
import { Model } from '../native/core.js';
import { startMockEngine } from '../mock/engine-server.js';

export interface MockEngineOptions {
  modelPath: string;
  host: string;
  port: number;
  mode: 'echo' | 'sim';
  stepMs: number;
  prefillMsPerToken: number;
}

export async function runMockEngine(o: MockEngineOptions): Promise<void> {
  const info = Model.load(resolve(o.modelPath)).info();
  const engine = await startMockEngine({
    host: o.host,
    port: o.port,
    mode: o.mode,
    eosTokenIds: info.eosTokenIds,
    vocabSize: info.vocabSize,
    modelPath: resolve(o.modelPath),
    servedModelName: basename(resolve(o.modelPath)),
    stepMs: o.stepMs,
    prefillMsPerToken: o.prefillMsPerToken,
  });
  console.log(`portico mock-engine (${o.mode}) listening on grpc://${o.host}:${engine.port}`);
  const stop = () => {
    void engine.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
