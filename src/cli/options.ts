// Declarative command-line options: one table per command gives the parser, the help
// text, the PORTICO_* environment variables and the config-file keys, so a flag can
// never be documented in one place and missing in another.
//
// Precedence: command line, then environment (PORTICO_<FLAG_IN_UPPER_SNAKE>), then the
// --config JSON file (keys are the flag names), then the default.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

export class UsageError extends Error {}

interface Base {
  name: string;
  help: string;
  group: string;
  /** Shown as the value placeholder in help. */
  meta?: string;
  /** A credential: never handed to a custom chat processor (frontend-config.ts). */
  secret?: boolean;
  /** Another environment variable that sets it too, after PORTICO_<FLAG> (Dynamo's name for the same setting). */
  envAlias?: string;
}

export type OptionSpec =
  | (Base & { kind: 'string'; default?: string; choices?: readonly string[]; required?: boolean })
  | (Base & { kind: 'int'; default?: number; min?: number })
  | (Base & { kind: 'number'; default?: number; min?: number; exclusiveMin?: boolean })
  | (Base & { kind: 'bool'; default?: boolean })
  | (Base & { kind: 'list' })
  /** A JSON array of objects: a config-file array, or JSON text in a flag or the environment. */
  | (Base & { kind: 'objects' });

export type OptionValue = string | number | boolean | string[] | Record<string, unknown>[] | undefined;

export function envName(flag: string): string {
  return `PORTICO_${flag.replaceAll('-', '_').toUpperCase()}`;
}

function convert(spec: OptionSpec, raw: unknown, source: string): OptionValue {
  const where = source === 'flag' ? `--${spec.name}` : source;
  switch (spec.kind) {
    case 'string': {
      // A config array or object is not a string (it was once joined into one bogus path).
      if (typeof raw === 'object' && raw !== null) throw new UsageError(`${where} must be a string, got ${JSON.stringify(raw)}`);
      const v = String(raw);
      if (spec.choices && !spec.choices.includes(v)) throw new UsageError(`${where} must be one of ${spec.choices.map((c) => `'${c}'`).join(', ')}, got '${v}'`);
      return v;
    }
    case 'int': {
      const n = typeof raw === 'number' ? raw : Number(raw);
      const min = spec.min ?? 0;
      if (!Number.isInteger(n) || n < min) throw new UsageError(`${where} must be an integer >= ${min}, got '${raw}'`);
      return n;
    }
    case 'number': {
      const n = typeof raw === 'number' ? raw : Number(raw);
      const min = spec.min ?? 0;
      if (!Number.isFinite(n) || n < min || (spec.exclusiveMin && n === min)) throw new UsageError(`${where} must be a number ${spec.exclusiveMin ? '>' : '>='} ${min}, got '${raw}'`);
      return n;
    }
    case 'bool': {
      if (typeof raw === 'boolean') return raw;
      const s = String(raw).trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(s)) return true;
      if (['0', 'false', 'no', 'off', ''].includes(s)) return false;
      throw new UsageError(`${where} must be a boolean, got '${raw}'`);
    }
    case 'objects': {
      let v = raw;
      if (typeof raw === 'string') {
        try {
          v = JSON.parse(raw);
        } catch (err) {
          throw new UsageError(`${where} must be a JSON array of objects: ${(err as Error).message}`);
        }
      }
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'object' || x === null || Array.isArray(x))) throw new UsageError(`${where} must be an array of objects, got ${JSON.stringify(v)}`);
      return v as Record<string, unknown>[];
    }
    case 'list': {
      if (Array.isArray(raw)) return raw.map(String);
      return String(raw)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    }
  }
}

/** Parse argv against the table, filling gaps from the environment, the config file and defaults. */
export function resolveOptions(specs: readonly OptionSpec[], argv: string[], env: NodeJS.ProcessEnv = process.env): { values: Record<string, OptionValue>; help: boolean } {
  const parseOpts: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = { help: { type: 'boolean', short: 'h' }, config: { type: 'string' } };
  // Every value flag is read as `multiple`, so that a repeated single-valued flag is an
  // error instead of the last one silently winning.
  for (const s of specs) parseOpts[s.name] = s.kind === 'bool' ? { type: 'boolean' } : { type: 'string', multiple: true };
  const { values: flags } = parseArgs({ args: argv, options: parseOpts, strict: true, allowPositionals: false });
  if (flags.help) return { values: {}, help: true };

  const configPath = (flags.config as string | undefined) ?? env.PORTICO_CONFIG;
  let config: Record<string, unknown> = {};
  if (configPath) {
    try {
      config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new UsageError(`cannot read config file ${configPath}: ${(err as Error).message}`);
    }
    if (typeof config !== 'object' || config === null || Array.isArray(config)) throw new UsageError(`config file ${configPath} must hold a JSON object`);
    const known = new Set(specs.map((s) => s.name));
    for (const k of Object.keys(config)) if (!known.has(k)) throw new UsageError(`config file ${configPath}: unknown option '${k}'`);
  }

  const values: Record<string, OptionValue> = {};
  for (const s of specs) {
    const f = flags[s.name];
    const ownEnv = env[envName(s.name)];
    const aliased = (ownEnv === undefined || ownEnv === '') && s.envAlias !== undefined;
    const e = aliased ? env[s.envAlias!] : ownEnv;
    let v: OptionValue;
    if (Array.isArray(f) && f.length > 1 && s.kind !== 'list') throw new UsageError(`--${s.name} was given ${f.length} times; it takes one value${s.name === 'model-path' || s.name === 'model-name' ? ' (serve several models with --model NAME=DIR, repeatable)' : ''}`);
    if (f !== undefined && !(Array.isArray(f) && f.length === 0)) v = s.kind === 'list' ? (f as string[]).flatMap((x) => convert(s, x, 'flag') as string[]) : convert(s, Array.isArray(f) ? f[0] : f, 'flag');
    else if (e !== undefined && e !== '') v = convert(s, e, aliased ? s.envAlias! : envName(s.name));
    else if (config[s.name] !== undefined) v = convert(s, config[s.name], `config '${s.name}'`);
    else v = s.kind === 'list' || s.kind === 'objects' ? [] : s.default;
    if (s.kind === 'string' && s.required && v === undefined) throw new UsageError(`--${s.name} is required`);
    values[s.name] = v;
  }
  return { values, help: false };
}

/** Help text for a command, grouped, with each option's environment variable. */
export function helpText(usage: string, intro: string, specs: readonly OptionSpec[]): string {
  const groups = new Map<string, OptionSpec[]>();
  for (const s of specs) groups.set(s.group, [...(groups.get(s.group) ?? []), s]);
  let out = `${usage}\n\n${intro}\n`;
  for (const [group, list] of groups) {
    out += `\n${group}:\n`;
    for (const s of list) {
      const meta = s.kind === 'bool' ? '' : ` ${s.meta ?? (s.kind === 'int' || s.kind === 'number' ? 'N' : 'VALUE')}`;
      const head = `  --${s.name}${meta}`;
      const dflt = 'default' in s && s.default !== undefined ? ` Default: ${s.default}.` : '';
      const req = s.kind === 'string' && s.required ? ' (required)' : '';
      const lines = `${s.help}${dflt}${req} [env ${envName(s.name)}${s.envAlias ? `, ${s.envAlias}` : ''}]`;
      out += head.length < 30 ? `${head.padEnd(30)}${lines}\n` : `${head}\n${' '.repeat(30)}${lines}\n`;
    }
  }
  out += `\nOther:\n  --config FILE               A JSON object of options (keys are the flag names). [env PORTICO_CONFIG]\n  -h, --help                  Show this help.\n`;
  return out;
}
