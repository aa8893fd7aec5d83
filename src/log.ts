// Structured logs: one JSON object per line (or plain text for humans), with a level
// filter. Request-scoped lines carry the request id.

export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

let minLevel = ORDER.info;
let json = false;

// A closed stdout/stderr (a supervisor that went away) must not crash the server.
for (const s of [process.stdout, process.stderr]) s.on('error', () => undefined);

export function configureLog(opts: { level?: Level; format?: 'json' | 'text' }): void {
  if (opts.level) minLevel = ORDER[opts.level];
  if (opts.format) json = opts.format === 'json';
}

function write(level: Level, msg: string, fields: Record<string, unknown>): void {
  if (ORDER[level] < minLevel) return;
  const stream = level === 'error' || level === 'warn' ? process.stderr : process.stdout;
  if (json) {
    stream.write(`${JSON.stringify({ ts: new Date().toISOString(), level, msg, ...fields })}\n`);
    return;
  }
  const extra = Object.entries(fields)
    .map(([k, v]) => ` ${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join('');
  stream.write(`${level === 'info' ? '' : `${level}: `}${msg}${extra}\n`);
}

export const log = {
  debug: (msg: string, fields: Record<string, unknown> = {}) => write('debug', msg, fields),
  info: (msg: string, fields: Record<string, unknown> = {}) => write('info', msg, fields),
  warn: (msg: string, fields: Record<string, unknown> = {}) => write('warn', msg, fields),
  error: (msg: string, fields: Record<string, unknown> = {}) => write('error', msg, fields),
};
