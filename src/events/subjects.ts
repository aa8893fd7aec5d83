// NATS subject and stream names of one namespace. Model names and worker URLs hold
// dots and slashes, which subjects cannot: each becomes one base64url token.
//
//   <ns>.kv.<model>.<worker>      a worker's KV event batches (JetStream stream <NS>_KV)
//   <ns>.router.<model>.load      frontend replicas' load snapshots (core NATS)
//   <ns>.router.<model>.route     frontend replicas' routing decisions (core NATS)
//   <ns>.ratelimit.usage          frontend replicas' per-key rate-limit spending (core NATS)

export function token(s: string): string {
  return Buffer.from(s).toString('base64url') || '_';
}

function nsToken(ns: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(ns)) throw new Error(`namespace '${ns}' may hold only letters, digits, '_' and '-'`);
  return ns;
}

export function kvSubject(ns: string, model: string, worker: string): string {
  return `${nsToken(ns)}.kv.${token(model)}.${token(worker)}`;
}

export function kvStream(ns: string): { name: string; subjects: string } {
  return { name: `${nsToken(ns).toUpperCase()}_KV`, subjects: `${ns}.kv.>` };
}

export function loadSubject(ns: string, model: string): string {
  return `${nsToken(ns)}.router.${token(model)}.load`;
}

export function routeSubject(ns: string, model: string): string {
  return `${nsToken(ns)}.router.${token(model)}.route`;
}

export function limitSubject(ns: string): string {
  return `${nsToken(ns)}.ratelimit.usage`;
}
