// The one mapping from engine failures to what a client sees (src/protocol/engine-errors.ts
// through ApiError.from), the gRPC status of every ApiError (the KServe face), and the
// worker failure breaker (src/router/worker-breaker.ts).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Code, ConnectError } from '@connectrpc/connect';

import { EngineError, type EngineErrorCode } from '../src/engine/errors.js';
import { ApiError } from '../src/protocol/errors.js';
import { errorBody, errorEvent, grpcCodeOf, grpcError, responsesError } from '../src/protocol/error-wire.js';
import { clientSafe, contextLengthExceeded } from '../src/protocol/engine-errors.js';
import { WorkerBreaker } from '../src/router/worker-breaker.js';

const URL = 'grpc://10.1.2.3:30001';
const ID = 'chatcmpl-7f3a9c1e-internal';

function engineErr(code: EngineErrorCode, engineMessage: string): EngineError {
  return new EngineError(code, `Generate(${ID}) on engine worker ${URL} failed: ${engineMessage}`, URL, { engineMessage, requestId: ID });
}

test('each engine error class gets its status, code and Retry-After, and no URL, id or traceback', () => {
  const cases: Array<[EngineErrorCode, string, number, string, number | undefined]> = [
    ['invalid_argument', `request ${ID} at ${URL}: top_k is invalid`, 400, 'invalid_request', undefined],
    ['overloaded', `request ${ID}: KV cache is full`, 503, 'engine_overloaded', 1],
    ['unavailable', `engine at 10.1.2.3:30001 is draining`, 503, 'worker_unavailable', 1],
    ['timeout', `request ${ID} exceeded its deadline`, 504, 'engine_timeout', undefined],
    ['internal', `Traceback (most recent call last):\n  File "x.py", line 1\nRuntimeError: CUDA (${ID}, ${URL})`, 502, 'engine_error', undefined],
    ['aborted', 'stream reset', 502, 'engine_error', undefined],
    ['unimplemented', 'method not found', 501, 'engine_unimplemented', undefined],
  ];
  for (const [code, raw, status, apiCode, retryAfter] of cases) {
    const e = ApiError.from(engineErr(code, raw));
    assert.equal(e.status, status, code);
    assert.equal(e.code, apiCode, code);
    assert.equal(e.retryAfter, retryAfter, code);
    for (const format of ['openai', 'anthropic'] as const) {
      const body = errorBody(e, format);
      for (const secret of [URL, '10.1.2.3', '30001', ID, 'Traceback', 'File "']) assert.ok(!body.includes(secret), `${code} ${format} body leaks ${secret}: ${body}`);
    }
    assert.ok(e.detail?.includes(URL), 'the log detail keeps the worker URL');
  }
  assert.equal(ApiError.from(engineErr('invalid_argument', `request ${ID} at ${URL}: top_k is invalid`)).message, 'the engine rejected the request: request <request> at <url>: top_k is invalid');
});

test('a prompt past the context is a 400 context_length_exceeded with the numbers, in each engine\'s phrasing', () => {
  const phrasings: Array<[string, number, number]> = [
    ["The input (40000 tokens) is longer than the model's context length (32768 tokens).", 40000, 32768],
    ['Input length (40000 tokens) exceeds the maximum allowed length (32767 tokens). Use a shorter input or enable --allow-auto-truncate.', 40000, 32767],
    ["Requested token count exceeds the model's maximum context length of 32768 tokens. You requested a total of 40100 tokens: 40000 tokens from the input messages and 100 tokens for the completion.", 40100, 32768],
    ['The decoder prompt (length 40000) is longer than the maximum model length of 32768. Make sure that `max_model_len` is no smaller than the number of text tokens.', 40000, 32768],
    ["This model's maximum context length is 32768 tokens. However, your request has 40000 input tokens. Please reduce the length of the input messages.", 40000, 32768],
    ["This model's maximum context length is 4096 tokens. However, you requested 8000 tokens (7000 in the messages, 1000 in the completion).", 8000, 4096],
    ['prompt of 40000 tokens exceeds the context of 32768', 40000, 32768],
  ];
  for (const [msg, requested, limit] of phrasings) {
    assert.deepEqual(contextLengthExceeded(msg), { requested, limit }, msg);
    const e = ApiError.from(engineErr('invalid_argument', msg));
    assert.equal(e.status, 400);
    assert.equal(e.code, 'context_length_exceeded');
    assert.equal(e.type, 'invalid_request_error');
    assert.match(e.message, new RegExp(`maximum context length is ${limit} tokens.*${requested} input tokens`));
    assert.equal(JSON.parse(errorBody(e, 'anthropic')).error.type, 'invalid_request_error');
  }
  assert.equal(contextLengthExceeded('top_k must be positive'), null);
});

test('clientSafe keeps the first line and takes out URLs, addresses and the request id', () => {
  assert.equal(clientSafe(`bad logit_bias for ${ID} from http://[::1]:9000/x and 127.0.0.1:5\nmore`, { url: URL, requestId: ID }), 'bad logit_bias for <request> from <url> and <address>');
  assert.equal(clientSafe('Traceback (most recent call last):', { url: URL }), '');
  assert.ok(clientSafe('x'.repeat(1000), { url: URL }).length <= 301);
});

test('router errors keep their Retry-After through ApiError.from', () => {
  const e = ApiError.from({ apiStatus: 529, message: 'queue full', code: 'queue_full', retryAfter: 3 });
  assert.equal(e.status, 529);
  assert.equal(e.retryAfter, 3);
});

test('grpcCodeOf: every ApiError has its gRPC status', () => {
  const cases: Array<[ApiError, Code]> = [
    [ApiError.badRequest('x'), Code.InvalidArgument],
    [new ApiError(401, 'x'), Code.Unauthenticated],
    [new ApiError(403, 'x'), Code.PermissionDenied],
    [ApiError.notFound('x'), Code.NotFound],
    [new ApiError(413, 'x'), Code.ResourceExhausted],
    [new ApiError(429, 'x'), Code.ResourceExhausted],
    [new ApiError(529, 'x'), Code.ResourceExhausted],
    [new ApiError(500, 'x'), Code.Internal],
    [new ApiError(501, 'x'), Code.Unimplemented],
    [new ApiError(502, 'x'), Code.Unknown],
    [ApiError.unavailable('x'), Code.Unavailable],
    [new ApiError(504, 'x'), Code.DeadlineExceeded],
    [ApiError.from(engineErr('overloaded', 'full')), Code.ResourceExhausted],
    [ApiError.from(engineErr('unavailable', 'gone')), Code.Unavailable],
    [ApiError.from(engineErr('timeout', 'late')), Code.DeadlineExceeded],
    [ApiError.from(engineErr('invalid_argument', 'The input (9 tokens) is longer than the model\'s context length (8 tokens).')), Code.InvalidArgument],
    [ApiError.from(engineErr('internal', 'boom')), Code.Unknown],
  ];
  for (const [e, code] of cases) assert.equal(grpcCodeOf(e), code, `${e.status} ${e.code}`);
});

test('the breaker opens on consecutive failures, not on one; a success resets the run', () => {
  const b = new WorkerBreaker({ consecutive: 3, windowMs: 10_000, minRequests: 100, failureRate: 2 });
  assert.equal(b.failure(0), false);
  assert.equal(b.failure(1), false);
  b.success(2);
  assert.equal(b.failure(3), false);
  assert.equal(b.failure(4), false);
  assert.equal(b.failure(5), true);
  b.reset();
  assert.equal(b.failure(6), false);
});

test('the breaker opens on the failure rate over its window once enough requests ended', () => {
  const b = new WorkerBreaker({ consecutive: 0, windowMs: 1000, minRequests: 10, failureRate: 0.5 });
  let opened = false;
  for (let i = 0; i < 10 && !opened; i++) {
    if (i % 2 === 0) b.success(i);
    else opened = b.failure(i);
  }
  assert.equal(opened, true, '5 of 10 failed');
  const c = new WorkerBreaker({ consecutive: 0, windowMs: 1000, minRequests: 10, failureRate: 0.5 });
  for (let i = 0; i < 9; i++) c.success(i);
  assert.equal(c.failure(9), false, '1 of 10');
  // A new window forgets the old one.
  for (let i = 0; i < 4; i++) c.failure(2000 + i);
  assert.equal(c.failure(2005), false, 'only 5 requests in the new window');
});

test('a LoRA adapter load failure: a refusal is a 400 naming the worker and the cleaned reason, anything else a 502', () => {
  const op = { loadAdapter: 'ad', worker: 3 };
  const refused = ApiError.from(engineErr('invalid_argument', `cannot read LoRA adapter /models/ad from ${URL}`), op);
  assert.equal(refused.status, 400);
  assert.equal(refused.code, 'adapter_load_failed');
  assert.equal(refused.param, 'lora_path');
  assert.match(refused.message, /^worker 3 refused to load LoRA adapter 'ad': cannot read LoRA adapter \/models\/ad from <url>$/);
  assert.ok(!errorBody(refused, 'openai').includes(URL), 'no worker URL in the body');
  const failed = ApiError.from(engineErr('unavailable', `connection refused ${URL}`), op);
  assert.equal(failed.status, 502);
  assert.equal(failed.type, 'internal_error');
  assert.equal(failed.message, "worker 3 could not load LoRA adapter 'ad' (unavailable)");
  // A generation's mapping is untouched by the load's.
  assert.equal(ApiError.from(engineErr('invalid_argument', 'top_k is invalid')).code, 'invalid_request');
});

test('error-wire: the SSE error events carry the JSON body of their family, Responses its own fields, gRPC the status', () => {
  const e = new ApiError(503, 'the engine worker is unavailable; retry shortly', { code: 'worker_unavailable', retryAfter: 1 });
  for (const format of ['openai', 'anthropic'] as const) {
    const ev = errorEvent(e, format);
    assert.equal(ev, `event: error\ndata: ${errorBody(e, format)}\n\n`);
  }
  assert.deepEqual(JSON.parse(errorBody(e, 'anthropic')), { type: 'error', error: { type: 'overloaded_error', message: e.message } });
  assert.deepEqual(responsesError(ApiError.badRequest('bad', 'input', 'invalid_value')), { code: 'invalid_value', message: 'bad', param: 'input' });
  const g = grpcError(engineErr('overloaded', `KV cache full at ${URL}`));
  assert.equal(g.code, Code.ResourceExhausted);
  assert.ok(!g.rawMessage.includes(URL), 'the gRPC message is the client-facing one');
  assert.equal(grpcError(new Error('boom')).code, Code.Internal);
  const passed = new ConnectError('cancelled', Code.Canceled);
  assert.equal(grpcError(passed), passed, 'a ConnectError passes as it is');
});
