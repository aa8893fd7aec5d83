// One NATS connection for the event plane: reconnects forever (every 250 ms, with
// jitter), so a restarted nats-server is picked up without restarting anything; the
// first connect failing is a clear startup error. `connected` follows the client's
// status events.

import { connect, type NatsConnection } from '@nats-io/transport-node';
import { log } from '../log.js';

export interface EventPlane {
  readonly nc: NatsConnection;
  readonly connected: boolean;
  /** Times the connection came back after it was lost. */
  readonly reconnects: number;
  close(): Promise<void>;
}

export async function connectEventPlane(servers: string[], name: string): Promise<EventPlane> {
  let nc: NatsConnection;
  try {
    nc = await connect({ servers, name, maxReconnectAttempts: -1, reconnectTimeWait: 250, reconnectJitter: 100, timeout: 5000, pingInterval: 5000, maxPingOut: 2 });
  } catch (err) {
    throw new Error(`cannot reach NATS at ${servers.join(', ')} (--event-plane): ${(err as Error).message}`);
  }
  const state = { connected: true, reconnects: 0 };
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') {
        if (state.connected) log.warn('NATS lost; reconnecting', { name });
        state.connected = false;
      } else if (s.type === 'reconnect') {
        state.connected = true;
        state.reconnects++;
        log.info('NATS reconnected', { name });
      }
    }
  })().catch(() => {});
  return {
    nc,
    get connected() {
      return state.connected;
    },
    get reconnects() {
      return state.reconnects;
    },
    async close() {
      await nc.drain().catch(() => nc.close());
    },
  };
}
