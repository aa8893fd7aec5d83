// The frontend configuration a custom chat processor's provider receives first
// (src/cli/frontend-config.ts), built from `portico serve` options as the CLI resolves
// them: credentials in URL options (a postgres:// Responses store, NATS and etcd URLs,
// worker URLs, the config form's model workers) are cut out wherever they come from, and
// the rest of each URL is kept. (The API keys' absence is checked end to end in
// processors-arguments.e2e.test.ts.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveOptions } from '../src/cli/options.js';
import { SERVE_OPTIONS } from '../src/cli/serve-options.js';
import { frontendConfig } from '../src/cli/frontend-config.js';

const PASSWORDS = ['pg-pw-1', 'pg-pw-2', 'nats-token-1', 'nats-pw-2', 'etcd-pw', 'worker-pw', 'model-worker-pw'];

test('credentials inside URL options are cut out; the URLs are otherwise kept', () => {
  const { values } = resolveOptions(SERVE_OPTIONS, [
    '--responses-store', 'postgres://app:pg-pw-1@db.internal:5432/responses?sslmode=require&password=pg-pw-2',
    '--event-plane', 'nats://nats-token-1@n1:4222,nats://u:nats-pw-2@n2:4222',
    '--worker', 'm=grpc://w:worker-pw@10.0.0.5:30000',
    '--models', JSON.stringify([{ name: 'a', 'model-path': '/models/a', worker: ['grpc://x:model-worker-pw@10.0.0.6:30000'] }]),
  ], { PORTICO_DISCOVERY: 'etcd://root:etcd-pw@e1:2379,e2:2379' });
  const config = frontendConfig(SERVE_OPTIONS, values);
  const text = JSON.stringify(config);
  for (const pw of PASSWORDS) assert.ok(!text.includes(pw), `${pw} is cut out`);
  assert.equal(config['responses-store'], 'postgres://db.internal:5432/responses?sslmode=require&password=');
  assert.equal(config['event-plane'], 'nats://n1:4222,nats://n2:4222');
  assert.equal(config.discovery, 'etcd://e1:2379,e2:2379');
  assert.deepEqual(config.worker, ['m=grpc://10.0.0.5:30000']);
  assert.deepEqual(config.models, [{ name: 'a', 'model-path': '/models/a', worker: ['grpc://10.0.0.6:30000'] }]);
});

test('values without credentials pass unchanged, and the CLI\'s own resolutions override', () => {
  const { values } = resolveOptions(SERVE_OPTIONS, ['--responses-store', 'sqlite:/var/lib/portico/r.db', '--cors-allow-origins', 'https://a.example,https://b.example', '--api-key', 'k1,k2']);
  const config = frontendConfig(SERVE_OPTIONS, values, { shards: 4 });
  assert.equal(config['responses-store'], 'sqlite:/var/lib/portico/r.db');
  assert.deepEqual(config['cors-allow-origins'], ['https://a.example', 'https://b.example']);
  assert.equal(config.shards, 4);
  assert.ok(!('api-key' in config));
});
