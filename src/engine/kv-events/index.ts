// KV-event ingestion: one normalised event stream per worker, from gRPC
// (SubscribeKvEvents) or vLLM's ZMQ publisher.
export type { KvBlockRef, KvEvent, KvEventSink, KvEventSource, KvEventSourceStats, WorkerLoad } from './types.js';
export { toHash } from './types.js';
export { KvBlockSet } from './block-set.js';
export { GrpcKvEventSubscriber, normaliseBatch, normaliseLoad, type GrpcKvSubscriberOptions } from './grpc-subscriber.js';
export { ZmqKvEventSubscriber, type ZmqKvSubscriberOptions } from './zmq-subscriber.js';
export { decodeVllmBatch } from './vllm-msgpack.js';
export { createKvEventSource, type KvEventSourceOptions } from './source.js';
