// `portico mock-engine`: a standalone GPU-free worker for tests and benchmarks.

import { writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { Model } from '../native/core.js';
import { hostname } from 'node:os';
import { startMockEngine, type MockEngineOptions as EngineOptions } from '../mock/engine-server.js';
import { etcdEndpoints } from '../discovery/endpoints.js';
import { newRecord } from '../discovery/record.js';
import { WorkerRegistration } from '../discovery/registration.js';

export interface MockEngineOptions {
  modelPath: string;
  host: string;
  port: number;
  mode: 'echo' | 'sim';
  stepMs: number;
  prefillMsPerToken: number;
  /** Everything else the simulator takes (protocol, KV pool, scheduler, timing, KV events). */
  engine?: Partial<EngineOptions>;
  /** Fail requests whose prompt holds a `[[fault:KIND]]` trigger (src/mock/faults.ts). */
  faults?: boolean;
  /** sim: open every answer with a reasoning block of this many tokens. */
  reasoningTokens?: number;
  thinkStart?: string;
  thinkEnd?: string;
  /** Register in etcd (--register) under this model name (default: the folder's name). */
  register?: { discovery: string; modelName?: string; namespace: string; ttlSecs: number; advertiseHost?: string };
}

export async function runMockEngine(o: MockEngineOptions): Promise<void> {
  const endpoints = o.register ? etcdEndpoints(o.register.discovery) : [];
  const model = Model.load(resolve(o.modelPath));
  const info = model.info();
  let reasoning: EngineOptions['reasoning'];
  if (o.reasoningTokens !== undefined && o.reasoningTokens > 0) {
    const start = model.tokenToId(o.thinkStart ?? '<think>');
    const end = model.tokenToId(o.thinkEnd ?? '</think>');
    if (start === null || end === null) {
      throw new Error(`--reasoning-tokens: the tokenizer has no ${JSON.stringify(o.thinkStart ?? '<think>')} / ${JSON.stringify(o.thinkEnd ?? '</think>')} token`);
    }
    reasoning = { startId: start, endId: end, thinkTokens: o.reasoningTokens };
  }
  const engine = await startMockEngine({
    ...o.engine,
    host: o.host,
    port: o.port,
    mode: o.mode,
    eosTokenIds: info.eosTokenIds,
    vocabSize: info.vocabSize,
    modelPath: resolve(o.modelPath),
    servedModelName: basename(resolve(o.modelPath)),
    stepMs: o.stepMs,
    prefillMsPerToken: o.prefillMsPerToken,
    reasoning,
    faults: o.faults ? { decode: (ids) => model.decode(Uint32Array.from(ids), false) } : undefined,
  });
  const scheme = engine.url.split('://')[0];
  console.log(`portico mock-engine (${o.mode}, ${o.engine?.protocol ?? 'sglang'}) listening on ${scheme}://${o.host}:${engine.port}`);
  if (engine.zmq) console.log(`KV events (ZMQ) on ${engine.zmq.endpoint}${engine.zmq.replayEndpoint ? `, replay on ${engine.zmq.replayEndpoint}` : ''}`);
  // Benches: PORTICO_SIM_EMIT_TRACE=<file> records when every token left the simulator,
  // written to <file> as JSON ({ requestId: [ms, tokenId, ...] }) on SIGTERM / SIGINT.
  const traceFile = process.env.PORTICO_SIM_EMIT_TRACE;
  if (traceFile) engine.core.emitTrace = new Map();
  let registration: WorkerRegistration | null = null;
  if (o.register) {
    const r = o.register;
    const host = r.advertiseHost ?? (o.host === '0.0.0.0' || o.host === '::' ? hostname() : o.host);
    const url = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${engine.port}`;
    const record = newRecord(r.modelName ?? basename(resolve(o.modelPath)), url, { dpSize: o.engine?.dataParallelSize ?? 1, blockSize: engine.core.hub.blockSize });
    registration = new WorkerRegistration({ endpoints, namespace: r.namespace, record, ttlSecs: r.ttlSecs });
    try {
      await registration.start();
    } catch (err) {
      await engine.close();
      throw err;
    }
    console.log(`registered in etcd as ${registration.key} (model ${record.model})`);
  }
  const stop = () => {
    if (traceFile) writeFileSync(traceFile, JSON.stringify(Object.fromEntries(engine.core.emitTrace!)));
    void (registration?.close() ?? Promise.resolve())
      .then(() => engine.close())
      .then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
