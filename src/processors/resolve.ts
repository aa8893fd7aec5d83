// --chat-processor NAME → the provider function (spec 002 "Register and run it").
//   portico                       the built-in native path (no provider)
//   a registered name             an installed package's package.json `portico.chatProcessors`
//                                 map, name → "relative/module.mjs:export" (Portico's
//                                 equivalent of Python's entry-point group)
//   path/to/module.mjs:export     a module path (relative to the working directory), for development
// Anything else is an error that lists the registered processors.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ChatProcessorProvider } from './contract.js';

export const BUILT_IN = 'portico';

export class UnknownProcessorError extends Error {}

export interface Registered {
  name: string;
  /** The package that registers it. */
  pkg: string;
  /** "module path inside the package:export". */
  target: string;
  /** The package's folder. */
  dir: string;
}

/** node_modules folders a package could be installed in: up from the working directory and from Portico itself. */
function moduleDirs(cwd: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const portico = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  for (const start of [resolve(cwd), portico]) {
    for (let d = start; ; d = dirname(d)) {
      const nm = join(d, 'node_modules');
      if (!seen.has(nm) && existsSync(nm)) {
        seen.add(nm);
        out.push(nm);
      }
      if (dirname(d) === d) break;
    }
  }
  return out;
}

function packageDirs(nm: string): string[] {
  const out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(nm);
  } catch {
    return out;
  }
  for (const e of entries) {
    if (e.startsWith('.')) continue;
    if (e.startsWith('@')) {
      try {
        for (const s of readdirSync(join(nm, e))) out.push(join(nm, e, s));
      } catch {
        // not a folder
      }
    } else out.push(join(nm, e));
  }
  return out;
}

/** Every processor registered by an installed package (and by the working directory's own package.json). */
export function registeredProcessors(cwd = process.cwd()): Registered[] {
  const found = new Map<string, Registered>();
  const dirs = [resolve(cwd), ...moduleDirs(cwd).flatMap(packageDirs)];
  for (const dir of dirs) {
    let pkg: { name?: unknown; portico?: { chatProcessors?: unknown } };
    try {
      pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as typeof pkg;
    } catch {
      continue;
    }
    const map = pkg?.portico?.chatProcessors;
    if (!map || typeof map !== 'object' || Array.isArray(map)) continue;
    for (const [name, target] of Object.entries(map as Record<string, unknown>)) {
      // The nearest installation wins, as Node's own resolution does.
      if (typeof target === 'string' && !found.has(name)) found.set(name, { name, pkg: String(pkg.name ?? dir), target, dir });
    }
  }
  return [...found.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The names a user may pass, `portico` first. */
export function processorNames(cwd = process.cwd()): string[] {
  return [BUILT_IN, ...registeredProcessors(cwd).map((r) => r.name)];
}

/** Splits "module:export" at its last colon. */
function splitTarget(target: string): { module: string; exportName: string } | null {
  const at = target.lastIndexOf(':');
  if (at <= 0 || at === target.length - 1) return null;
  return { module: target.slice(0, at), exportName: target.slice(at + 1) };
}

async function importProvider(file: string, exportName: string, what: string): Promise<ChatProcessorProvider> {
  if (!existsSync(file)) throw new UnknownProcessorError(`${what}: no such module file ${file}`);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new UnknownProcessorError(`${what}: cannot load ${file}: ${(err as Error).message}`);
  }
  const fn = mod[exportName];
  if (typeof fn !== 'function') throw new UnknownProcessorError(`${what}: ${file} has no exported function \`${exportName}\``);
  return fn as ChatProcessorProvider;
}

/**
 * The provider NAME stands for, or null for the built-in path. Throws
 * UnknownProcessorError (with the registered names) when it resolves to nothing.
 */
export async function resolveProcessor(name: string, cwd = process.cwd()): Promise<ChatProcessorProvider | null> {
  if (name === BUILT_IN) return null;
  const registered = registeredProcessors(cwd);
  const r = registered.find((x) => x.name === name);
  if (r) {
    const t = splitTarget(r.target);
    if (!t) throw new UnknownProcessorError(`chat processor '${name}' (package ${r.pkg}) is registered as '${r.target}'; expected "path/to/module.mjs:export"`);
    return importProvider(resolve(r.dir, t.module), t.exportName, `chat processor '${name}' (package ${r.pkg})`);
  }
  const t = splitTarget(name);
  if (t && /[\\/]|\.[cm]?js$/.test(t.module)) {
    return importProvider(isAbsolute(t.module) ? t.module : resolve(cwd, t.module), t.exportName, `chat processor '${name}'`);
  }
  const names = [BUILT_IN, ...registered.map((x) => x.name)];
  throw new UnknownProcessorError(
    `unknown chat processor '${name}': not a registered name nor a "path/to/module.mjs:export" path. Registered chat processors: ${names.join(', ')}`,
  );
}
