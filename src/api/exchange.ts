// The contract between the HTTP layer and the endpoint handlers. src/http implements
// it over uWebSockets.js; handlers never see uWS, so they can be driven by any
// transport (and tests can drive them directly).

import type { ErrorFormat } from '../protocol/error-wire.js';
import type { ModelStats } from '../metrics/frontend.js';
import type { Cancellation } from '../engine/types.js';
import type { LimitTicket } from '../pipeline/rate-limit.js';
import type { RequestTrace } from '../tracing/request-trace.js';

/** A served model's name and metric children. */
export interface ModelStatsRef {
  readonly name: string;
  readonly stats: ModelStats;
}

export interface Exchange {
  /** The whole request body, as received. */
  readonly body: Buffer;
  /** Lower-cased request header, or '' when absent. */
  header(name: string): string;
  /** The i-th `:name` parameter of the route path, or '' when absent. */
  param(i: number): string;
  /** The query string, without '?' ('' when none). */
  readonly query?: string;
  /** The request id returned on every response (x-request-id or a generated one): echoed and logged, never sent to an engine. */
  readonly requestId: string;
  /**
   * The id this request's engine requests carry: unique per request whatever the client
   * sends (two clients may send the same x-request-id; an engine refuses a duplicate id,
   * and an Abort by id would end the other's stream). Sub-requests append `-<i>`.
   */
  readonly engineRequestId: string;
  /** Fires once when the client goes away before the response ended (or the server aborts the request). */
  readonly signal: AbortSignal;
  /**
   * The same event as `signal`, without an AbortController (whose creation and listeners
   * were ~4% of a short chat request's CPU): what generations take. Use `signal` where a
   * real AbortSignal is needed (AbortSignal.any, fetch, Connect calls).
   */
  readonly cancellation: Cancellation;
  /**
   * The rate-limit budget of the request's API key (set by the transport on generation
   * routes when limits are configured): what its generations are admitted against.
   */
  readonly rateLimit?: LimitTicket | null;
  /**
   * The request's trace when tracing is on and this is a generation route; null or absent
   * otherwise. Handlers mark their phases on it and hand it to the generation.
   */
  readonly trace?: RequestTrace | null;
  /** The model named by describe(), if any (its metric children). */
  readonly model?: ModelStatsRef | null;
  /** Name the model and request type once known, for per-model metrics and counts. */
  describe(model: ModelStatsRef, stream: boolean): void;

  /**
   * Adds a header to the response, written with its head (an error response's too); no
   * effect once the head is out. Names are lower-case and already validated.
   */
  addResponseHeader?(name: string, value: string): void;

  /** Send a complete JSON response (an already-serialised body). */
  sendJson(status: number, body: string): void;
  /** Send a complete response of another content type. */
  sendText(status: number, body: string, contentType: string): void;
  /** Start a text/event-stream response. */
  startEventStream(): void;
  /**
   * Write one chunk of the event stream. Returns a promise only when the client is
   * slow and the chunk is buffered (await it to pause the producer); otherwise undefined.
   */
  writeEvent(chunk: string): Promise<void> | undefined;
  /**
   * From now on, write the event stream's text at most once per `ms` (what is made in
   * between goes out together, held at most `ms`). Without it: once per event-loop turn.
   */
  coalesceEvents?(ms: number): void;
  /** End the event stream. */
  endEventStream(): void;
  /** Give up on the exchange: abort its work and close the connection (buffered output is discarded). */
  abortFromServer?(): void;
}

export type Handler = (ex: Exchange) => void | Promise<void>;

export interface Route {
  method: 'get' | 'post' | 'delete';
  path: string;
  handler: Handler;
  /** The error body shape of this endpoint's API family. Default: openai. */
  errors?: ErrorFormat;
  /** Served without an API key (health, liveness, metrics). */
  public?: boolean;
  /** Counts against the concurrent-request limit. */
  generation?: boolean;
  /**
   * An operator endpoint (workers, busy thresholds): needs --admin-api-key when one is set,
   * else a loopback client; a POST needs a JSON content type (see src/http/access.ts).
   */
  admin?: boolean;
  /** The metrics scrape: needs --metrics-api-key when one is set. */
  metrics?: boolean;
}
