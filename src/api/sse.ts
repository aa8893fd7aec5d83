// Writing an OpenAI-style event stream from output events: the first engine event is
// awaited before the 200 is committed (so a worker that fails at once still gets a
// proper error status), slow readers pause the producer, an error after the stream
// started becomes an error event, and the stream ends with `data: [DONE]`.

import { ApiError } from '../protocol/errors.js';
import type { Exchange } from './exchange.js';

export const SSE_DONE = 'data: [DONE]\n\n';

export interface StreamFormat<E> {
  /** Written once, before the first event. */
  start(): string;
  /** The SSE text for one event ('' to write nothing). */
  event(ev: E): string;
  /** The SSE text for an error after the stream started. */
  error?(err: ApiError): string;
  /** The closing text. Default: `data: [DONE]`. */
  done?: string;
}

export async function streamEvents<E>(ex: Exchange, events: AsyncIterable<E>, fmt: StreamFormat<E>): Promise<void> {
  const it = events[Symbol.asyncIterator]();
  const first = await it.next();
  ex.startEventStream();
  const head = fmt.start();
  if (head) await ex.writeEvent(head);
  try {
    for (let r = first; !r.done; r = await it.next()) {
      const text = fmt.event(r.value);
      if (text) {
        const p = ex.writeEvent(text);
        if (p) await p;
      }
    }
  } catch (err) {
    if (ex.cancellation.aborted) return;
    const e = ApiError.from(err);
    await ex.writeEvent(fmt.error ? fmt.error(e) : `event: error\ndata: ${JSON.stringify(e.toOpenAI())}\n\n`);
  }
  if (ex.cancellation.aborted) return;
  const done = fmt.done ?? SSE_DONE;
  if (done) await ex.writeEvent(done);
  ex.endEventStream();
}
