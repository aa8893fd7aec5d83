// AsyncResource.prototype.bind without the deprecated `asyncResource` accessor pair.
//
// Node 20 gives every function AsyncResource#bind returns a getter and a setter for
// `asyncResource`, each wrapped by util.deprecate (DEP0172), so every bind makes several
// closures and redefines properties. Node's http2 client binds once per request stream
// (ClientHttp2Session#request), so a frontend that opens one engine stream per request pays
// it on every request: ~40 µs of CPU per request here (bench/RESULTS.md, "The floor of
// uWS + Node http2", the --eol-bind rows). Node removed the accessor when DEP0172
// reached End-of-Life; this installs the same bind on a Node that still has it. The bound
// function runs `fn` in the resource's async scope with the same `this` and arguments and
// has the same `length`; only reading the deprecated `bound.asyncResource` changes
// (undefined instead of a deprecation warning and the resource).
//
// Installed by the serving process (each shard thread has its own copy of the prototype).

import { AsyncResource } from 'node:async_hooks';

type AnyFn = (this: unknown, ...args: unknown[]) => unknown;

function leanBind(this: AsyncResource, fn: AnyFn, thisArg?: unknown): AnyFn {
  if (typeof fn !== 'function') throw new TypeError(`The "fn" argument must be of type function. Received ${fn === null ? 'null' : typeof fn}`);
  const resource = this;
  const bound: AnyFn =
    thisArg === undefined
      ? function (this: unknown, ...args: unknown[]) {
          return resource.runInAsyncScope(fn, this, ...args);
        }
      : resource.runInAsyncScope.bind(resource, fn, thisArg) as AnyFn;
  Object.defineProperty(bound, 'length', { configurable: true, enumerable: false, value: fn.length, writable: false });
  return bound;
}

/** Whether this Node's AsyncResource#bind still builds the deprecated accessor. */
export function hasDeprecatedBindAccessor(): boolean {
  const bound = new AsyncResource('PorticoProbe').bind(() => undefined);
  return Object.getOwnPropertyDescriptor(bound, 'asyncResource')?.get !== undefined;
}

/** Install the lean bind where Node still has the accessor; returns whether it did. */
export function installLeanAsyncBind(): boolean {
  if (AsyncResource.prototype.bind === (leanBind as unknown)) return false;
  if (!hasDeprecatedBindAccessor()) return false;
  AsyncResource.prototype.bind = leanBind as unknown as typeof AsyncResource.prototype.bind;
  return true;
}
