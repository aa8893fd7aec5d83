// A port the kernel says is free now, for servers that must come back on the same port
// after a restart (etcd, nats-server): the one the shard supervisor uses.

export { freePort } from '../../src/http/port-guard.js';
