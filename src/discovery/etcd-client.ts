// One etcd3 client, configured for discovery: a host that fails is retried after 1 s
// (the library's default is 5 s) and a lost watch comes back with backoff from 100 ms
// to 2 s (default: up to 30 s), so a restarted etcd is picked up within seconds.

import { Etcd3 } from 'etcd3';
import { circuitBreaker, ConsecutiveBreaker, ExponentialBackoff, handleAll, retry, type IBackoff } from 'cockatiel';

export function etcdClient(endpoints: string[]): Etcd3 {
  return new Etcd3({
    hosts: endpoints,
    dialTimeout: 3000,
    faultHandling: {
      host: () => circuitBreaker(handleAll, { halfOpenAfter: 1000, breaker: new ConsecutiveBreaker(3) }),
      global: retry(handleAll, { maxAttempts: 1 }),
      // etcd3 calls next() on it like on its own default (an ExponentialBackoff): a factory, typed as a backoff.
      watchBackoff: new ExponentialBackoff({ initialDelay: 100, maxDelay: 2000 }) as unknown as IBackoff<unknown>,
    },
  });
}

/** A promise that rejects after `ms` (etcd calls otherwise wait for gRPC's own deadline). */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, fail) => {
      timer = setTimeout(() => fail(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]);
}
