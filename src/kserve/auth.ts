// The API key on the gRPC face: with --api-key set, every rpc but the health ones
// (ServerLive, ServerReady, ModelReady — public like HTTP's /health and /live) needs the
// metadata `authorization: Bearer KEY`; otherwise UNAUTHENTICATED.

import { timingSafeEqual } from 'node:crypto';
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';

const PUBLIC = new Set(['ServerLive', 'ServerReady', 'ModelReady']);

export function apiKeyInterceptor(apiKey: string | readonly string[]): Interceptor {
  const keys = (typeof apiKey === 'string' ? [apiKey] : apiKey).map((k) => Buffer.from(k));
  return (next) => async (req) => {
    if (!PUBLIC.has(req.method.name) && !keys.some((key) => authorized(req.header.get('authorization'), key))) {
      throw new ConnectError('Incorrect or missing API key: send it as the metadata "authorization: Bearer <key>"', Code.Unauthenticated);
    }
    return next(req);
  };
}

function authorized(auth: string | null, key: Buffer): boolean {
  if (!auth || !auth.toLowerCase().startsWith('bearer ')) return false;
  const given = Buffer.from(auth.slice(7).trim());
  return given.length === key.length && timingSafeEqual(given, key);
}
