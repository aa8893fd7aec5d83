// `portico mock-engine`: a standalone GPU-free worker for tests and benchmarks.

import { writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { Model } from '../native/core.js';
import { hostname } from 'node:os';
import { startMockEngine, type MockEngineOptions as EngineOptions } from '../mock/engine-server.js';
import { etcdEndpoints } from '../discovery/endpoints.js';
import { newRecord } from '../discovery/record.js';
import { WorkerRegistration } from '../discovery/registration.js';
import { canonicalWorkerUrl } from '../api/worker-url.js';
import { connectEventPlane, type EventPlane } from '../events/connection.js';
import { NatsKvPublisher } from '../events/kv-publisher.js';
import { natsServers } from '../events/servers.js';
import { publishHub } from '../mock/nats-kv.js';

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
  /** sim: each token a pure function of the ids before it, a script of reasoning, text and tool calls (src/mock/script.ts). */
  deterministic?: boolean;
  /** SIGTERM / SIGINT: how long in-flight requests may finish before they end with UNAVAILABLE (s). Default 5. */
  shutdownGraceSecs?: number;
  /** sim: open every answer with a reasoning block of this many tokens. */
  reasoningTokens?: number;
  thinkStart?: string;
  thinkEnd?: string;
  /** Register in etcd (--register) under this model name (default: the folder's name). */
  register?: { discovery: string; ttlSecs: number };
  /** Also publish KV events on NATS (--event-plane). */
  eventPlane?: string;
  /** Registered / published under this model name (default: the folder's name). */
  modelName?: string;
  namespace?: string;
  /** Host in the worker URL others reach it at (default: --host, or the hostname for 0.0.0.0). */
  advertiseHost?: string;
}

export async function runMockEngine(o: MockEngineOptions): Promise<void> {
  const endpoints = o.register ? etcdEndpoints(o.register.discovery) : [];
  const servers = o.eventPlane ? natsServers(o.eventPlane) : [];
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
    advertiseHost: o.advertiseHost,
    faults: o.faults ? { decode: (ids) => model.decode(Uint32Array.from(ids), false) } : undefined,
    deterministic: o.deterministic,
    tokenizer: o.deterministic
      ? { encode: (text) => model.encode(text, false), decode: (ids) => model.decode(Uint32Array.from(ids), false), tokenToId: (t) => model.tokenToId(t) }
      : undefined,
    shutdownGraceMs: o.shutdownGraceSecs === undefined ? undefined : o.shutdownGraceSecs * 1000,
  });
  const scheme = engine.url.split('://')[0];
  console.log(`portico mock-engine (${o.mode}${o.deterministic && o.mode === 'sim' ? ', deterministic' : ''}, ${o.engine?.protocol ?? 'sglang'}) listening on ${scheme}://${o.host}:${engine.port}`);
  if (engine.rendezvous) console.log(`${o.engine?.protocol === 'vllm' ? 'KV side channel' : 'bootstrap server'} (prefill role) on ${o.host}:${engine.rendezvous.port}`);
  else if (o.engine?.role === 'decode') console.log('decode role: takes each request\'s KV from the prefill worker it names');
  if (engine.zmq) console.log(`KV events (ZMQ) on ${engine.zmq.endpoint}${engine.zmq.replayEndpoint ? `, replay on ${engine.zmq.replayEndpoint}` : ''}`);
  // Benches: PORTICO_SIM_EMIT_TRACE=<file> records when every token left the simulator,
  // written to <file> as JSON ({ requestId: [ms, tokenId, ...] }) on SIGTERM / SIGINT.
  const traceFile = process.env.PORTICO_SIM_EMIT_TRACE;
  if (traceFile) engine.core.emitTrace = new Map();
  const host = o.advertiseHost ?? (o.host === '0.0.0.0' || o.host === '::' ? hostname() : o.host);
  const url = canonicalWorkerUrl(`${scheme}://${host.includes(':') ? `[${host}]` : host}:${engine.port}`);
  const servedAs = o.modelName ?? basename(resolve(o.modelPath));
  const namespace = o.namespace ?? 'portico';
  let plane: EventPlane | null = null;
  let publisher: NatsKvPublisher | null = null;
  if (o.eventPlane) {
    try {
      plane = await connectEventPlane(servers, `portico-mock-engine-${engine.port}`);
      publisher = new NatsKvPublisher(plane.nc, { namespace, model: servedAs, worker: url });
      await publisher.start();
    } catch (err) {
      await plane?.close();
      await engine.close();
      throw err;
    }
    publishHub(engine.core.hub, publisher);
    console.log(`KV events (NATS) on ${o.eventPlane} as ${url}`);
  }
  let registration: WorkerRegistration | null = null;
  if (o.register) {
    const r = o.register;
    const record = newRecord(servedAs, url, { dpSize: o.engine?.dataParallelSize ?? 1, blockSize: engine.core.hub.blockSize, role: o.engine?.role ?? 'aggregated' });
    registration = new WorkerRegistration({ endpoints, namespace, record, ttlSecs: r.ttlSecs });
    try {
      await registration.start();
    } catch (err) {
      await engine.close();
      throw err;
    }
    console.log(`registered in etcd as ${registration.key} (model ${record.model})`);
  }
  // Graceful shutdown: leave discovery, refuse new requests (UNAVAILABLE, HealthCheck not
  // serving), give the ones in flight the grace, end the rest with UNAVAILABLE, exit.
  const stop = () => {
    if (traceFile) writeFileSync(traceFile, JSON.stringify(Object.fromEntries(engine.core.emitTrace!)));
    const grace = o.shutdownGraceSecs ?? 5;
    void (registration?.close() ?? Promise.resolve())
      .then(async () => {
        publisher?.close();
        await plane?.close();
      })
      .then(() => {
        console.log(`draining: ${engine.stats.active} requests in flight, ${grace} s grace`);
        return engine.drain(grace * 1000);
      })
      .then((ended) => {
        console.log(`drained: ${ended} requests ended with UNAVAILABLE`);
        return engine.close();
      })
      .then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
