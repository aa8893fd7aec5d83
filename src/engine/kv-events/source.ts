// One way to open a worker's KV-event source: its ZMQ publisher when one is
// named (vLLM's own format), otherwise the SubscribeKvEvents gRPC stream of
// the worker URL (SGLang or vLLM, by scheme).

import { GrpcKvEventSubscriber } from './grpc-subscriber.js';
import type { KvEventSink, KvEventSource, WorkerLoad } from './types.js';
import { ZmqKvEventSubscriber } from './zmq-subscriber.js';

export interface KvEventSourceOptions {
  /** Worker URL (grpc://… or vllm+grpc://…); names the worker in events. */
  url: string;
  sink: KvEventSink;
  /** Loads pushed on the gRPC stream. */
  onLoad?: (l: WorkerLoad) => void;
  /** Read vLLM's ZMQ publisher instead of gRPC. */
  zmq?: { endpoint: string; replayEndpoint?: string; topic?: string };
  onError?: (err: unknown) => void;
}

export function createKvEventSource(o: KvEventSourceOptions): KvEventSource {
  if (o.zmq) {
    return new ZmqKvEventSubscriber({ ...o.zmq, worker: o.url, sink: o.sink, onError: o.onError });
  }
  return new GrpcKvEventSubscriber({ url: o.url, sink: o.sink, onLoad: o.onLoad, onError: o.onError });
}
