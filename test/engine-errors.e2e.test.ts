// Every engine error class, from an out-of-process mock engine (`portico mock-engine
// --faults`: a prompt holding [[fault:KIND]] fails at once, [[fault:KIND@N]] after N
// tokens), on both engine protocols, through a real `portico serve`: unary and streaming,
// OpenAI and Anthropic shapes. Each gets its status (a streamed failure after the commit
// gets an error event and the end of the stream), 503s carry Retry-After, and no body
// names the worker's address, the request id or a traceback. After each, a plain request
// succeeds (one failure does not take the worker out either).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startPortico, QWEN3, type Proc } from './helpers/portico.js';

interface Expect {
  status: number;
  code: string;
  anthropic: string;
  retryAfter: boolean;
}

const KINDS: Record<string, Expect> = {
  invalid_argument: { status: 400, code: 'invalid_request', anthropic: 'invalid_request_error', retryAfter: false },
  context_length: { status: 400, code: 'context_length_exceeded', anthropic: 'invalid_request_error', retryAfter: false },
  resource_exhausted: { status: 503, code: 'engine_overloaded', anthropic: 'overloaded_error', retryAfter: true },
  unavailable: { status: 503, code: 'worker_unavailable', anthropic: 'overloaded_error', retryAfter: true },
  deadline_exceeded: { status: 504, code: 'engine_timeout', anthropic: 'api_error', retryAfter: false },
  internal: { status: 502, code: 'engine_error', anthropic: 'api_error', retryAfter: false },
  reset: { status: 503, code: 'worker_unavailable', anthropic: 'overloaded_error', retryAfter: true },
};

const PROTOCOLS = ['sglang', 'vllm'] as const;
const servers: Partial<Record<(typeof PROTOCOLS)[number], { engine: Proc; front: Proc }>> = {};

before(async () => {
  for (const protocol of PROTOCOLS) {
    const engine = await startPortico(['mock-engine', '--model-path', QWEN3, '--port', '0', '--faults', '--protocol', protocol]);
    const worker = `${protocol === 'vllm' ? 'vllm+grpc' : 'grpc'}://127.0.0.1:${engine.port}`;
    const front = await startPortico(['serve', '--http-port', '0', '--host', '127.0.0.1', '--model-path', QWEN3, '--model-name', 'm', '--worker', worker,
      // Half of this file's requests fail on purpose: no breaker here (test/faults.e2e.test.ts covers it).
      '--worker-breaker-failures', '0', '--worker-breaker-failure-rate', '0',
      // An immediate failure must land inside the pre-commit peek even on a loaded machine.
      '--stream-precommit-peek-ms', '10000']);
    servers[protocol] = { engine, front };
  }
});
after(async () => {
  for (const s of Object.values(servers)) {
    await s?.front.stop();
    await s?.engine.stop();
  }
});

type Api = 'openai' | 'anthropic';

async function post(front: Proc, api: Api, content: string, stream: boolean, requestId: string) {
  const path = api === 'openai' ? '/v1/chat/completions' : '/v1/messages';
  const res = await fetch(`${front.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    body: JSON.stringify({ model: 'm', max_tokens: 40, stream, messages: [{ role: 'user', content }] }),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), contentType: res.headers.get('content-type') ?? '', text: await res.text() };
}

function assertClean(text: string, secrets: string[], what: string): void {
  for (const s of secrets) assert.ok(!text.includes(s), `${what}: the body leaks ${JSON.stringify(s)}: ${text}`);
  assert.ok(!/Traceback|File "/.test(text), `${what}: the body holds a traceback: ${text}`);
}

/** The error object of an error response body, in the API's shape. */
function errorOf(api: Api, json: any): { type: string; code?: string; message: string } {
  if (api === 'anthropic') {
    assert.equal(json.type, 'error');
    return json.error;
  }
  return json.error;
}

let okRequests = 0;
async function succeeds(front: Proc, api: Api, stream: boolean, what: string): Promise<void> {
  const r = await post(front, api, 'Say hello.', stream, `ok-request-${++okRequests}`);
  assert.equal(r.status, 200, `${what}: a plain request after the failure succeeds: ${r.text}`);
}

for (const protocol of PROTOCOLS) {
  for (const [kind, want] of Object.entries(KINDS)) {
    test(`${protocol}: engine ${kind}, at once and mid-stream, unary and streaming, OpenAI and Anthropic`, async () => {
      const { engine, front } = servers[protocol]!;
      for (const api of ['openai', 'anthropic'] as const) {
        for (const stream of [false, true]) {
          for (const at of ['', '@4']) {
            const what = `${protocol} ${kind}${at} ${api} ${stream ? 'stream' : 'unary'}`;
            const requestId = `client-id-${kind}-${api}-${stream}-${at.length}`;
            const prompt = `Please write a long story about rivers and mountains. [[fault:${kind}${at}]] Thank you very much.`;
            const r = await post(front, api, prompt, stream, requestId);
            const secrets = [String(engine.port), '127.0.0.1', requestId];
            assertClean(r.text, secrets, what);
            if (stream && at) {
              // Committed before the failure: 200, some output, then an error event and the end.
              assert.equal(r.status, 200, what);
              assert.match(r.contentType, /text\/event-stream/, what);
              const m = /event: error\ndata: (.*)\n\n/.exec(r.text);
              assert.ok(m, `${what}: an error event: ${r.text}`);
              assert.ok(r.text.indexOf('data: ') < m.index, `${what}: output before the error event`);
              const e = errorOf(api, JSON.parse(m[1]!));
              if (api === 'openai') assert.equal(e.code, want.code, what);
              else assert.equal(e.type, want.anthropic, what);
              if (api === 'openai') assert.ok(r.text.endsWith('data: [DONE]\n\n'), `${what}: the stream ends after the error`);
            } else {
              assert.equal(r.status, want.status, `${what}: ${r.text}`);
              assert.match(r.contentType, /application\/json/, what);
              const e = errorOf(api, JSON.parse(r.text));
              if (api === 'openai') assert.equal(e.code, want.code, what);
              else assert.equal(e.type, want.anthropic, what);
              if (want.retryAfter) assert.match(r.retryAfter ?? '', /^\d+$/, `${what}: Retry-After`);
              if (kind === 'context_length') assert.match(e.message, /maximum context length is 32768 tokens\. However, your request has \d+ input tokens/, what);
            }
            await succeeds(front, api, stream, what);
          }
        }
      }
    });
  }
}

for (const protocol of PROTOCOLS) {
  test(`${protocol}: /v1/embeddings maps engine errors the same way`, async () => {
    const { engine, front } = servers[protocol]!;
    const embed = async (input: string) => {
      const res = await fetch(`${front.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'embed-client-id' }, body: JSON.stringify({ model: 'm', input }) });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() };
    };
    for (const [kind, want] of Object.entries(KINDS)) {
      if (kind === 'reset') continue; // Embed is a unary rpc on Connect: no stream to reset
      const r = await embed(`some text [[fault:${kind}]] to embed`);
      assert.equal(r.status, want.status, `${kind}: ${r.text}`);
      assert.equal(JSON.parse(r.text).error.code, want.code, kind);
      if (want.retryAfter) assert.match(r.retryAfter ?? '', /^\d+$/, `${kind}: Retry-After`);
      assertClean(r.text, [String(engine.port), '127.0.0.1', 'embed-client-id'], `embed ${kind}`);
      assert.equal((await embed('plain text')).status, 200, `${kind}: the next embedding is served`);
    }
  });
}
