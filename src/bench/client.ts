// Sends one request and times it (a non-streamed answer has only its end-to-end time). The clock is performance.now() read when each piece of the
// body arrives. TTFT is the first chunk that carries any generated output: content, reasoning
// (reasoning_content / reasoning) or a tool-call delta, as aiperf counts it; TTFO (time to first
// output token) is the first non-reasoning output. Every later chunk with output is one gap.
// Token counts come from the server's usage (stream_options.include_usage), as aiperf's
// --use-server-token-count; without usage the caller counts the text with the tokenizer.

import http from 'node:http';
import https from 'node:https';
import { SseSplitter } from './sse.js';

export type ErrorKind = 'http' | 'connect' | 'timeout' | 'stream' | 'protocol';

export interface Timing {
  ok: boolean;
  status: number | null;
  errorKind?: ErrorKind;
  error?: string;
  /** From send to the end of the body, ms. */
  e2eMs: number;
  ttftMs: number | null;
  ttfoMs: number | null;
  /** Gaps between consecutive chunks that carried output, ms. */
  gapsMs: number[];
  promptTokens: number | null;
  outputTokens: number | null;
  reasoningTokens: number | null;
  cachedTokens: number | null;
  /** The answer's text (content only), for the next turn of a conversation. */
  text: string;
  /** Reasoning text, for counting tokens when the server sends no usage. */
  reasoning: string;
}

interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

interface Delta {
  content?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  tool_calls?: unknown[] | null;
}

interface Choice {
  delta?: Delta;
  message?: Delta;
  text?: string | null;
}

export class Client {
  private readonly agent: http.Agent;
  private readonly base: URL;
  private readonly headers: Record<string, string>;

  constructor(url: string, apiKey: string | undefined, sockets: number) {
    this.base = new URL(url);
    const Agent = this.base.protocol === 'https:' ? https.Agent : http.Agent;
    this.agent = new Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
    this.headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) };
  }

  close(): void {
    this.agent.destroy();
  }

  async get(path: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = (this.base.protocol === 'https:' ? https : http).request(new URL(path, this.base), { method: 'GET', agent: this.agent, headers: this.headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  }

  send(path: string, body: unknown, timeoutMs: number): Promise<Timing> {
    const payload = Buffer.from(JSON.stringify(body));
    return new Promise((resolve) => {
      const t0 = performance.now();
      const t: Timing = { ok: false, status: null, e2eMs: 0, ttftMs: null, ttfoMs: null, gapsMs: [], promptTokens: null, outputTokens: null, reasoningTokens: null, cachedTokens: null, text: '', reasoning: '' };
      let last = 0;
      let settled = false;
      const finish = (kind?: ErrorKind, error?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        t.e2eMs = performance.now() - t0;
        if (kind) {
          t.ok = false;
          t.errorKind = kind;
          t.error = error;
        } else t.ok = true;
        resolve(t);
      };
      const output = (now: number, d: Delta | undefined, text: string | null | undefined, streamed: boolean) => {
        const reasoning = d?.reasoning_content || d?.reasoning || '';
        const content = (d?.content || '') + (text || '');
        const tools = Array.isArray(d?.tool_calls) && d.tool_calls.length > 0;
        t.text += content;
        t.reasoning += reasoning;
        if (!streamed || (!reasoning && !content && !tools)) return;
        if (t.ttftMs === null) t.ttftMs = now - t0;
        else t.gapsMs.push(now - last);
        if ((content || tools) && t.ttfoMs === null) t.ttfoMs = now - t0;
        last = now;
      };
      const usage = (u: Usage | undefined | null) => {
        if (!u) return;
        t.promptTokens = u.prompt_tokens ?? t.promptTokens;
        t.outputTokens = u.completion_tokens ?? t.outputTokens;
        t.cachedTokens = u.prompt_tokens_details?.cached_tokens ?? t.cachedTokens;
        t.reasoningTokens = u.completion_tokens_details?.reasoning_tokens ?? t.reasoningTokens;
      };
      const req = (this.base.protocol === 'https:' ? https : http).request(
        new URL(path, this.base),
        { method: 'POST', agent: this.agent, headers: { ...this.headers, 'content-length': String(payload.length) } },
        (res) => {
          t.status = res.statusCode ?? null;
          res.setEncoding('utf8');
          const sse = (res.headers['content-type'] ?? '').startsWith('text/event-stream');
          if (t.status !== 200 || !sse) {
            let text = '';
            res.on('data', (d: string) => (text += d));
            res.on('end', () => {
              if (t.status !== 200) return finish('http', `${t.status} ${text.slice(0, 300)}`);
              const now = performance.now();
              try {
                const j = JSON.parse(text) as { choices?: Choice[]; usage?: Usage };
                for (const c of j.choices ?? []) output(now, c.message, c.text, false);
                usage(j.usage);
                finish();
              } catch (err) {
                finish('protocol', `unreadable JSON answer: ${(err as Error).message}`);
              }
            });
            res.on('error', (err) => finish('stream', err.message));
            return;
          }
          const split = new SseSplitter();
          let failed: string | undefined;
          const events = (list: string[]) => {
            const now = performance.now();
            for (const data of list) {
              if (data === '[DONE]') continue;
              let j: { choices?: Choice[]; usage?: Usage; error?: { message?: string } | string };
              try {
                j = JSON.parse(data) as typeof j;
              } catch {
                failed ??= `unreadable SSE data: ${data.slice(0, 200)}`;
                continue;
              }
              if (j.error) failed ??= typeof j.error === 'string' ? j.error : (j.error.message ?? JSON.stringify(j.error));
              for (const c of j.choices ?? []) output(now, c.delta, c.text, true);
              usage(j.usage);
            }
          };
          res.on('data', (d: string) => events(split.push(d)));
          res.on('end', () => {
            events(split.rest());
            if (failed) finish('stream', failed);
            else finish();
          });
          res.on('error', (err) => finish('stream', err.message));
          res.on('aborted', () => finish('stream', 'the server closed the stream early'));
        },
      );
      const timer = setTimeout(() => {
        finish('timeout', `no complete answer in ${timeoutMs} ms`);
        req.destroy();
      }, timeoutMs);
      // HPE_*: llhttp could not parse the answer (not HTTP at all, e.g. a gRPC port).
      req.on('error', (err: NodeJS.ErrnoException) => finish(err.code?.startsWith('HPE_') ? 'protocol' : t.status === null ? 'connect' : 'stream', `${err.code ?? ''} ${err.message}`.trim()));
      req.end(payload);
    });
  }
}
