// The HTTP error writer for a request that has no exchange (a failure before one was made,
// an OPTIONS that could not be answered): the same status line, headers and body in the
// route's API family's shape as every other error response, and the connection closed.
// Neither case can be brought about from a client (both guard against uWS itself failing),
// so a recording HttpResponse stands in for uWS here.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sendErrorToResponse } from '../src/http/error-response.js';
import { ApiError } from '../src/protocol/errors.js';
import type { HttpResponse } from '../src/http/uws.js';

interface Written {
  status?: string;
  headers: [string, string][];
  body?: string;
  closed?: boolean;
}

function recording(): { res: HttpResponse; out: Written } {
  const out: Written = { headers: [] };
  const res = {
    cork(f: () => void) {
      f();
      return res;
    },
    writeStatus(s: string) {
      out.status = s;
      return res;
    },
    writeHeader(k: string, v: string) {
      out.headers.push([k, v]);
      return res;
    },
    end(body: string, close: boolean) {
      out.body = body;
      out.closed = close;
      return res;
    },
  };
  return { res: res as unknown as HttpResponse, out };
}

test('an unexpected failure is a 500 with the OpenAI error body, and the connection closes', () => {
  const { res, out } = recording();
  sendErrorToResponse(res, ApiError.from(new TypeError('boom')), 'openai');
  assert.equal(out.status, '500 Internal Server Error');
  assert.deepEqual(out.headers, [['content-type', 'application/json']]);
  const body = JSON.parse(out.body!);
  assert.equal(typeof body.error.message, 'string');
  assert.equal(body.error.type, 'internal_error');
  assert.equal(out.closed, true);
});

test('an Anthropic route gets the Anthropic shape; a 503 says when to retry; a 401 how to authenticate', () => {
  const a = recording();
  sendErrorToResponse(a.res, new ApiError(503, 'busy', { type: 'service_unavailable', retryAfter: 2 }), 'anthropic');
  assert.equal(a.out.status, '503 Service Unavailable');
  assert.deepEqual(a.out.headers, [['content-type', 'application/json'], ['retry-after', '2']]);
  const body = JSON.parse(a.out.body!);
  assert.equal(body.type, 'error');
  assert.equal(body.error.message, 'busy');

  const k = recording();
  sendErrorToResponse(k.res, new ApiError(401, 'no key', { code: 'invalid_api_key' }), 'openai');
  assert.equal(k.out.status, '401 Unauthorized');
  assert.deepEqual(k.out.headers, [['content-type', 'application/json'], ['www-authenticate', 'Bearer']]);
  assert.equal(JSON.parse(k.out.body!).error.code, 'invalid_api_key');
});

test('a response uWS no longer takes (the client left) is logged, not thrown', () => {
  const res = { cork: () => { throw new Error('uWS: response already aborted'); } } as unknown as HttpResponse;
  assert.doesNotThrow(() => sendErrorToResponse(res, new ApiError(500, 'x'), 'openai'));
});
