// `portico register`: a sidecar that registers a worker in etcd and keeps its lease
// alive until SIGTERM/SIGINT, which revokes it (src/discovery/registration.ts).

import { parseArgs } from 'node:util';
import { canonicalWorkerUrl } from '../api/worker-url.js';
import { etcdEndpoints } from '../discovery/endpoints.js';
import { newRecord } from '../discovery/record.js';
import { WorkerRegistration } from '../discovery/registration.js';
import { log } from '../log.js';
import { REGISTER_HELP } from './help.js';
import { UsageError } from './options.js';

function positive(flag: string, v: string | undefined, dflt: number, min: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${flag} must be an integer >= ${min}, got '${v}'`);
  return n;
}

/** Register, then resolve once deregistered (on SIGTERM/SIGINT). */
export async function registerCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      discovery: { type: 'string' },
      worker: { type: 'string' },
      model: { type: 'string' },
      namespace: { type: 'string' },
      'dp-size': { type: 'string' },
      'block-size': { type: 'string' },
      role: { type: 'string' },
      'lease-ttl-secs': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(REGISTER_HELP);
    return;
  }
  for (const f of ['discovery', 'worker', 'model'] as const) if (!values[f]) throw new UsageError(`--${f} is required`);
  let endpoints: string[];
  let url: string;
  try {
    endpoints = etcdEndpoints(values.discovery!);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  try {
    url = canonicalWorkerUrl(values.worker!);
  } catch (err) {
    throw new UsageError(`--worker: ${(err as Error).message.replace('`url`', 'the URL')}`);
  }
  const role = values.role ?? 'aggregated';
  if (role !== 'aggregated' && role !== 'prefill' && role !== 'decode') throw new UsageError(`--role must be aggregated, prefill or decode, got '${role}'`);
  const record = newRecord(values.model!, url, { dpSize: positive('dp-size', values['dp-size'], 1, 1), blockSize: positive('block-size', values['block-size'], 0, 0), role });
  const reg = new WorkerRegistration({ endpoints, namespace: values.namespace ?? 'portico', record, ttlSecs: positive('lease-ttl-secs', values['lease-ttl-secs'], 10, 1) });
  await reg.start();
  console.log(`portico register: ${record.model} at ${url}${role === 'aggregated' ? '' : ` (${role})`} registered as ${reg.key}`);
  await new Promise<void>((done) => {
    const stop = () => {
      log.info('deregistering');
      void reg.close().then(done);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
