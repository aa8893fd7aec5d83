// What every response of the fuzzed endpoints must be: never a 5xx (there is a worker, so
// not even a 503), a non-2xx carries the endpoint's error body (OpenAI
// {"error":{message,type,param,code}}, Anthropic {"type":"error","error":{type,message}}),
// a 2xx is JSON or a well-formed event stream that ends with its terminal event.
// A failure is named by a class (the minimiser keeps an input that fails the same way).

import type { Reply } from './http-client.js';
import type { Endpoint } from './seeds.js';

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function json(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Why `v` is not a shaped error of `shape` ('' when it is). */
export function errorShapeProblem(shape: Endpoint['errors'], v: unknown): string {
  if (shape === 'anthropic') {
    if (!isObj(v) || v.type !== 'error' || !isObj(v.error)) return 'not {"type":"error","error":{...}}';
    if (typeof v.error.type !== 'string' || typeof v.error.message !== 'string' || v.error.message === '') return 'anthropic error without type/message';
    return '';
  }
  if (!isObj(v) || !isObj(v.error)) return 'not {"error":{...}}';
  const e = v.error;
  if (typeof e.message !== 'string' || e.message === '' || typeof e.type !== 'string') return 'openai error without message/type';
  if (!('param' in e) || !('code' in e)) return 'openai error without param/code';
  if (!(e.param === null || typeof e.param === 'string') || !(e.code === null || typeof e.code === 'string' || typeof e.code === 'number')) return 'openai error param/code of the wrong type';
  return '';
}

const TERMINAL: Record<string, (event: string, data: string) => boolean> = {
  openai: (_e, d) => d === '[DONE]',
  anthropic: (e) => e === 'message_stop' || e === 'error',
  responses: (e) => e === 'response.completed' || e === 'response.incomplete' || e === 'response.failed' || e === 'error',
};

/** Why the event stream `text` is not well formed for `ep` ('' when it is). */
export function streamProblem(ep: Endpoint, text: string): string {
  if (!ep.stream) return 'an event stream from an endpoint that does not stream';
  if (!text.endsWith('\n\n')) return 'stream does not end with a blank line';
  const events = text.slice(0, -2).split('\n\n');
  let last = { event: '', data: '' };
  for (const ev of events) {
    let event = '';
    const data: string[] = [];
    for (const line of ev.split('\n')) {
      if (line.startsWith(':')) continue;
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
      else return `bad SSE line ${JSON.stringify(line.slice(0, 80))}`;
    }
    if (data.length === 0) continue; // a comment-only keep-alive
    const d = data.join('\n');
    if (d !== '[DONE]') {
      let v: unknown;
      try {
        v = JSON.parse(d);
      } catch {
        return `event data is not JSON: ${JSON.stringify(d.slice(0, 80))}`;
      }
      const isError = event === 'error' || (isObj(v) && isObj(v.error) && !('object' in v));
      if (isError) {
        const p = errorShapeProblem(ep.errors, v);
        if (p) return `unshaped error event: ${p}`;
        const type = isObj(v) && isObj(v.error) ? String(v.error.type) : '';
        if (/internal|api_error|server/.test(type)) return `internal error event (${type})`;
      }
    }
    last = { event, data: d };
  }
  if (!TERMINAL[ep.stream](last.event, last.data)) return `stream not terminated (last event ${JSON.stringify(last.event || last.data.slice(0, 40))})`;
  return '';
}

/** The failure class of `reply` to a request of `ep`, or '' when it is a correct answer. */
export function check(ep: Endpoint, reply: Reply): string {
  const ct = (reply.headers.get('content-type') ?? [''])[0];
  if (reply.status >= 500) {
    const v = json(reply.body);
    const msg = isObj(v) && isObj(v.error) ? String(v.error.message).slice(0, 60) : reply.body.toString('utf8', 0, 60);
    return `5xx ${reply.status} ${msg}`;
  }
  if (reply.status < 200 || reply.status >= 300) {
    if (!ct.startsWith('application/json')) return `error ${reply.status} with content-type ${JSON.stringify(ct)}`;
    const v = json(reply.body);
    const p = errorShapeProblem(ep.errors, v);
    return p ? `unshaped ${reply.status}: ${p}` : '';
  }
  if (ct.startsWith('text/event-stream')) {
    const p = streamProblem(ep, reply.body.toString('utf8'));
    return p ? `bad stream: ${p}` : '';
  }
  if (!ct.startsWith('application/json')) return `2xx with content-type ${JSON.stringify(ct)}`;
  if (json(reply.body) === undefined) return '2xx body is not JSON';
  return '';
}
