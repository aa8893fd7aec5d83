// The lean AsyncResource#bind Portico installs (src/runtime/lean-async-bind.ts) behaves like
// Node's own, minus the deprecated `asyncResource` accessor: same async scope, `this`,
// arguments, result, `length`, errors; and Node's http2 client (which binds per request)
// still works with it, including a request made while the session is connecting.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncLocalStorage, AsyncResource, executionAsyncId } from 'node:async_hooks';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { hasDeprecatedBindAccessor, installLeanAsyncBind } from '../src/runtime/lean-async-bind.js';

const stockBind = AsyncResource.prototype.bind;
const hadAccessor = hasDeprecatedBindAccessor();
const installed = installLeanAsyncBind();

test('installed exactly when this Node still builds the deprecated accessor; once', () => {
  assert.equal(installed, hadAccessor);
  if (Number(process.versions.node.split('.')[0]) === 20) assert.equal(installed, true, 'Node 20 has DEP0172 accessors');
  assert.equal(installLeanAsyncBind(), false, 'a second install is a no-op');
  const bound = new AsyncResource('T').bind(() => 1);
  assert.equal(Object.getOwnPropertyDescriptor(bound, 'asyncResource'), undefined);
});

// Each behaviour, checked for the stock bind and the installed one alike.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Bind = (this: AsyncResource, fn: (...args: any[]) => unknown, thisArg?: unknown) => (...args: any[]) => any;
for (const [name, bind] of [['stock', stockBind], ['lean', AsyncResource.prototype.bind]] as unknown as [string, Bind][]) {
  test(`${name} bind: runs in the resource's async scope and async context`, () => {
    const als = new AsyncLocalStorage<string>();
    const resource = als.run('inside', () => new AsyncResource('T'));
    const bound = bind.call(resource, () => ({ store: als.getStore(), id: executionAsyncId() }));
    const seen = als.run('outside', () => bound());
    assert.deepEqual(seen, { store: 'inside', id: resource.asyncId() });
  });

  test(`${name} bind: this, arguments, result and length`, () => {
    const resource = new AsyncResource('T');
    function f(this: unknown, a: number, b: number) {
      return { self: this, sum: a + b };
    }
    const loose = bind.call(resource, f);
    const receiver = { r: 1 };
    assert.deepEqual(loose.call(receiver, 2, 3), { self: receiver, sum: 5 });
    assert.equal(loose.length, 2);
    const fixed = bind.call(resource, f, receiver);
    assert.deepEqual(fixed.call({ other: true }, 4, 5), { self: receiver, sum: 9 });
    assert.equal(fixed.length, 2);
  });

  test(`${name} bind: a throwing function throws through; a non-function is a TypeError`, () => {
    const resource = new AsyncResource('T');
    const bound = bind.call(resource, () => {
      throw new RangeError('boom');
    });
    assert.throws(() => bound(), RangeError);
    assert.throws(() => bind.call(resource, 42 as never), TypeError);
  });
}

test('node:http2 requests work with the lean bind, also one made while connecting', async () => {
  const server = http2.createServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(`ok ${req.url}`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  const session = http2.connect(`http://127.0.0.1:${port}`);
  const get = (path: string) =>
    new Promise<string>((done, fail) => {
      const s = session.request({ ':path': path });
      let body = '';
      s.setEncoding('utf8');
      s.on('data', (c: string) => (body += c));
      s.on('end', () => done(body));
      s.on('error', fail);
      s.end();
    });
  try {
    assert.equal(session.connecting, true);
    const first = get('/a'); // bound to run on 'connect'
    assert.equal(await first, 'ok /a');
    assert.equal(await get('/b'), 'ok /b');
  } finally {
    session.close();
    await new Promise<void>((done) => server.close(() => done()));
  }
});
