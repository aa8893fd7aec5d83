// Child process of helpers/otlp-receiver.ts: an OTLP trace receiver on the official
// OpenTelemetry protos (test/fixtures/otlp, generated into test/gen/otlp), the two ways a
// collector takes spans: gRPC (TraceService/Export over cleartext HTTP/2) and HTTP/protobuf
// (POST /v1/traces). It keeps every span it decoded and lists them as JSON at GET /spans on
// the HTTP port. Prints one JSON line {"grpc": port, "http": port} once both listen.
//   argv[2]: 'serve'
//   argv[3]: 'count' keeps only the number of spans (a receiver for benchmarks, whose memory must not grow)
// (Without arguments, as when `node --test dist/test/` loads every file under test/, it does nothing.)

import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { ExportTraceServiceRequestSchema, ExportTraceServiceResponseSchema, type ExportTraceServiceRequest } from '../gen/otlp/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import type { AnyValue, KeyValue } from '../gen/otlp/opentelemetry/proto/common/v1/common_pb.js';

/** One received span, as the tests read it. */
export interface ReceivedSpan {
  via: 'grpc' | 'http';
  service: string;
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  traceState: string;
  name: string;
  /** Span_SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  startNs: string;
  endNs: string;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  /** Status code: 0 unset, 1 ok, 2 error. */
  status: number;
}

const EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
const spans: ReceivedSpan[] = [];
let exports = 0;
let counted = 0;
const countOnly = process.argv[3] === 'count';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function valueOf(v: AnyValue | undefined): unknown {
  const x = v?.value;
  if (!x || x.case === undefined) return null;
  if (x.case === 'arrayValue') return x.value.values.map(valueOf);
  if (x.case === 'kvlistValue') return attrs(x.value.values);
  if (x.case === 'intValue') return Number(x.value);
  if (x.case === 'bytesValue') return hex(x.value);
  return x.value;
}

function attrs(kvs: KeyValue[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of kvs) out[kv.key] = valueOf(kv.value);
  return out;
}

function keep(req: ExportTraceServiceRequest, via: 'grpc' | 'http'): void {
  exports++;
  if (countOnly) {
    for (const rs of req.resourceSpans) for (const ss of rs.scopeSpans) counted += ss.spans.length;
    return;
  }
  for (const rs of req.resourceSpans) {
    const service = String(attrs(rs.resource?.attributes ?? [])['service.name'] ?? '');
    for (const ss of rs.scopeSpans) {
      for (const s of ss.spans) {
        spans.push({
          via,
          service,
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          traceState: s.traceState,
          name: s.name,
          kind: s.kind,
          startNs: String(s.startTimeUnixNano),
          endNs: String(s.endTimeUnixNano),
          attributes: attrs(s.attributes),
          events: s.events.map((e) => ({ name: e.name, attributes: attrs(e.attributes) })),
          status: s.status?.code ?? 0,
        });
      }
    }
  }
}

function grpcServer(): http2.Http2Server {
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (d: Buffer) => chunks.push(d));
    stream.on('end', () => {
      const body = Buffer.concat(chunks);
      if (headers[':path'] !== EXPORT_PATH || body.length < 5 || body[0] !== 0) {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12', 'grpc-message': 'unimplemented' }, { endStream: true });
        return;
      }
      keep(fromBinary(ExportTraceServiceRequestSchema, body.subarray(5, 5 + body.readUInt32BE(1))), 'grpc');
      const reply = toBinary(ExportTraceServiceResponseSchema, create(ExportTraceServiceResponseSchema));
      const frame = Buffer.alloc(5 + reply.length);
      frame.writeUInt32BE(reply.length, 1);
      frame.set(reply, 5);
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(frame);
    });
  });
  return server;
}

function httpServer(): http.Server {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/spans') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ exports, counted, spans }));
        return;
      }
      if (req.method === 'POST' && req.url === '/v1/traces' && req.headers['content-type'] === 'application/x-protobuf') {
        keep(fromBinary(ExportTraceServiceRequestSchema, Buffer.concat(chunks)), 'http');
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.from(toBinary(ExportTraceServiceResponseSchema, create(ExportTraceServiceResponseSchema))));
        return;
      }
      res.writeHead(404).end();
    });
  });
}

async function main(): Promise<void> {
  const g = grpcServer();
  const h = httpServer();
  await new Promise<void>((r) => g.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => h.listen(0, '127.0.0.1', r));
  process.stdout.write(`${JSON.stringify({ grpc: (g.address() as AddressInfo).port, http: (h.address() as AddressInfo).port })}\n`);
}

if (process.argv[2] === 'serve') await main();
