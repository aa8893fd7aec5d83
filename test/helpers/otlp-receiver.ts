// An OTLP trace receiver in its own process (helpers/otlp-receiver-child.ts): where a
// Portico under test exports its spans, over gRPC or HTTP/protobuf, and what the test
// reads them back from.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { ReceivedSpan } from './otlp-receiver-child.js';
import { eventually } from './eventually.js';

export type { ReceivedSpan };

const CHILD = fileURLToPath(new URL('./otlp-receiver-child.js', import.meta.url));

export interface OtlpReceiver {
  /** http://127.0.0.1:P of the gRPC listener (--otlp-traces-endpoint with grpc). */
  readonly grpcUrl: string;
  /** http://127.0.0.1:P/v1/traces (with http/protobuf). */
  readonly httpUrl: string;
  /** Every span received so far. */
  spans(): Promise<ReceivedSpan[]>;
  /** The spans of one trace, once `until` holds for them (polled; a hang guard bounds it). */
  trace(traceId: string, until: (spans: ReceivedSpan[]) => boolean, what: string): Promise<ReceivedSpan[]>;
  stop(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const child: ChildProcess = spawn(process.execPath, [CHILD, 'serve'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const ports = await new Promise<{ grpc: number; http: number }>((resolve, reject) => {
    let line = '';
    child.stdout!.on('data', (d: Buffer) => {
      line += d.toString();
      const nl = line.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(line.slice(0, nl)) as { grpc: number; http: number });
    });
    child.once('exit', (code) => reject(new Error(`the OTLP receiver exited with ${code}: ${out}`)));
  });
  const base = `http://127.0.0.1:${ports.http}`;
  const spans = async () => ((await (await fetch(`${base}/spans`)).json()) as { spans: ReceivedSpan[] }).spans;
  return {
    grpcUrl: `http://127.0.0.1:${ports.grpc}`,
    httpUrl: `${base}/v1/traces`,
    spans,
    async trace(traceId, until, what) {
      let got: ReceivedSpan[] = [];
      await eventually(async () => until((got = (await spans()).filter((s) => s.traceId === traceId))), what);
      return got;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}
