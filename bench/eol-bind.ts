// Bench-only (`node --import dist/bench/eol-bind.js ...`): AsyncResource.prototype.bind as
// Node's main line has it since DEP0172 reached End-of-Life (nodejs/node#58618): the bound
// function and its `length`, without the deprecated `asyncResource` accessor pair that
// Node 20 builds with two deprecate() calls on every bind — and Node 20's
// ClientHttp2Session.request binds once per stream. floor.bench.ts --eol-bind runs the floor
// app and Portico with it beside the unpatched ones, to size what a newer Node saves.
// Never loaded by Portico itself.

import { AsyncResource } from 'node:async_hooks';

type AnyFn = (...args: unknown[]) => unknown;

function bind(this: AsyncResource, fn: AnyFn, thisArg?: unknown): AnyFn {
  if (typeof fn !== 'function') throw new TypeError('The "fn" argument must be of type function');
  const resource = this;
  const bound: AnyFn = thisArg === undefined
    ? function (this: unknown, ...args: unknown[]) {
        return resource.runInAsyncScope(fn, this, ...args);
      }
    : resource.runInAsyncScope.bind(resource, fn, thisArg);
  Object.defineProperty(bound, 'length', { configurable: true, enumerable: false, value: fn.length, writable: false });
  return bound;
}

AsyncResource.prototype.bind = bind as unknown as typeof AsyncResource.prototype.bind;
