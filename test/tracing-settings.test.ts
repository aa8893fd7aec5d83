// The tracing settings: the flags over the standard OTEL_* variables, what turns tracing
// off, and every bad value (a startup usage error naming the flag or variable), through
// tracingSettings() and through the real `portico serve` command line.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tracingSettings, TracingSettingsError } from '../src/tracing/settings.js';
import { runPortico, QWEN3 } from './helpers/portico.js';

test('no endpoint anywhere: tracing is off', () => {
  assert.equal(tracingSettings({}, {}), null);
  assert.equal(tracingSettings({ sampleRatio: 0.5 }, {}), null);
});

test('the flag: a gRPC endpoint, defaults as the OpenTelemetry SDKs have them', () => {
  assert.deepEqual(tracingSettings({ endpoint: 'http://collector:4317' }, {}), {
    endpoint: 'http://collector:4317',
    protocol: 'grpc',
    sampleRatio: 1,
    serviceName: 'portico',
    maxQueueSize: 2048,
    maxExportBatchSize: 512,
    scheduleDelayMs: 5000,
    exportTimeoutMs: 30000,
  });
});

test("a bare host:port means http:// (vLLM's flag takes one); a gRPC endpoint's path is dropped", () => {
  assert.equal(tracingSettings({ endpoint: 'collector:4317' }, {})?.endpoint, 'http://collector:4317');
  assert.equal(tracingSettings({ endpoint: 'https://collector:4317/x' }, {})?.endpoint, 'https://collector:4317');
});

test('HTTP/protobuf: a URL without a path gets /v1/traces; OTEL_EXPORTER_OTLP_ENDPOINT is a base, the traces endpoint a full URL', () => {
  assert.equal(tracingSettings({ endpoint: 'http://c:4318', protocol: 'http/protobuf' }, {})?.endpoint, 'http://c:4318/v1/traces');
  assert.equal(tracingSettings({ endpoint: 'http://c:4318/custom', protocol: 'http/protobuf' }, {})?.endpoint, 'http://c:4318/custom');
  assert.equal(tracingSettings({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/base/', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })?.endpoint, 'http://c:4318/base/v1/traces');
  assert.equal(tracingSettings({}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/mine', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })?.endpoint, 'http://c:4318/mine');
});

test('flags win over the environment; the traces variables over the general ones', () => {
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://general:4317',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4317',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
  };
  const fromEnv = tracingSettings({}, env)!;
  assert.equal(fromEnv.endpoint, 'http://traces:4317');
  assert.equal(fromEnv.protocol, 'grpc');
  assert.equal(fromEnv.sampleRatio, 0.25);
  const fromFlags = tracingSettings({ endpoint: 'http://flag:4317', protocol: 'grpc', sampleRatio: 0.5 }, env)!;
  assert.equal(fromFlags.endpoint, 'http://flag:4317');
  assert.equal(fromFlags.sampleRatio, 0.5);
});

test('the standard samplers map to a ratio; the batch variables are read', () => {
  const ratio = (OTEL_TRACES_SAMPLER: string) => tracingSettings({ endpoint: 'http://c:4317' }, { OTEL_TRACES_SAMPLER })!.sampleRatio;
  assert.equal(ratio('always_on'), 1);
  assert.equal(ratio('parentbased_always_off'), 0);
  assert.equal(ratio('traceidratio'), 1, 'no argument: ratio 1');
  const s = tracingSettings({ endpoint: 'http://c:4317' }, { OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '64', OTEL_BSP_SCHEDULE_DELAY: '0', OTEL_BSP_EXPORT_TIMEOUT: '100', OTEL_SERVICE_NAME: 'edge' })!;
  assert.equal(s.maxQueueSize, 10);
  assert.equal(s.maxExportBatchSize, 10, 'a batch is never larger than the queue');
  assert.equal(s.scheduleDelayMs, 0);
  assert.equal(s.exportTimeoutMs, 100);
  assert.equal(s.serviceName, 'edge');
});

test('OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off; an empty variable is unset', () => {
  assert.equal(tracingSettings({ endpoint: 'http://c:4317' }, { OTEL_SDK_DISABLED: 'true' }), null);
  assert.equal(tracingSettings({ endpoint: 'http://c:4317' }, { OTEL_TRACES_EXPORTER: 'none' }), null);
  assert.equal(tracingSettings({}, { OTEL_EXPORTER_OTLP_ENDPOINT: '' }), null);
  assert.equal(tracingSettings({ endpoint: 'http://c:4317' }, { OTEL_SDK_DISABLED: 'false' })?.endpoint, 'http://c:4317');
});

for (const [what, flags, env, message] of [
  ['an unknown protocol', { endpoint: 'http://c:4317', protocol: 'http/json' }, {}, /protocol must be 'grpc' or 'http\/protobuf'.*'http\/json'/],
  ['an unknown protocol in the environment', { endpoint: 'http://c:4317' }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'thrift' }, /'thrift'/],
  ['a ratio above 1', { endpoint: 'http://c:4317', sampleRatio: 1.5 }, {}, /--trace-sample-ratio must be between 0 and 1, got 1.5/],
  ['a ratio below 0', { endpoint: 'http://c:4317', sampleRatio: -0.1 }, {}, /between 0 and 1/],
  ['a ratio that is not a number', { endpoint: 'http://c:4317', sampleRatio: Number.NaN }, {}, /between 0 and 1/],
  ['a bad sampler argument', { endpoint: 'http://c:4317' }, { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' }, /OTEL_TRACES_SAMPLER_ARG must be a number between 0 and 1, got 'half'/],
  ['a sampler Portico cannot follow', { endpoint: 'http://c:4317' }, { OTEL_TRACES_SAMPLER: 'jaeger_remote' }, /OTEL_TRACES_SAMPLER must be one of/],
  ['an exporter other than otlp', { endpoint: 'http://c:4317' }, { OTEL_TRACES_EXPORTER: 'zipkin' }, /OTEL_TRACES_EXPORTER must be 'otlp' or 'none'/],
  ['an endpoint that is not a URL', { endpoint: 'http://[::1' }, {}, /--otlp-traces-endpoint must be a URL/],
  ['an endpoint of another scheme', { endpoint: 'ftp://c:4317' }, {}, /--otlp-traces-endpoint must be an http:\/\/ or https:\/\/ URL/],
  ['a bad endpoint in the environment', {}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://c' }, /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be/],
  ['a queue size of 0', { endpoint: 'http://c:4317' }, { OTEL_BSP_MAX_QUEUE_SIZE: '0' }, /OTEL_BSP_MAX_QUEUE_SIZE must be an integer of at least 1, got '0'/],
  ['a fractional batch size', { endpoint: 'http://c:4317' }, { OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1.5' }, /OTEL_BSP_MAX_EXPORT_BATCH_SIZE/],
  ['a negative delay', { endpoint: 'http://c:4317' }, { OTEL_BSP_SCHEDULE_DELAY: '-1' }, /OTEL_BSP_SCHEDULE_DELAY/],
  ['a timeout that is not a number', { endpoint: 'http://c:4317' }, { OTEL_BSP_EXPORT_TIMEOUT: 'soon' }, /OTEL_BSP_EXPORT_TIMEOUT/],
] as const) {
  test(`refused: ${what}`, () => {
    assert.throws(() => tracingSettings(flags, env), (err: unknown) => err instanceof TracingSettingsError && message.test(err.message));
  });
}

for (const [what, args, env, message] of [
  ['a protocol outside the choices', ['--otlp-traces-endpoint', 'http://127.0.0.1:24999', '--otlp-traces-protocol', 'udp'], {}, /otlp-traces-protocol/],
  ['a sample ratio above 1', ['--otlp-traces-endpoint', 'http://127.0.0.1:24999', '--trace-sample-ratio', '2'], {}, /--trace-sample-ratio must be between 0 and 1/],
  ['a sample ratio that is not a number', ['--otlp-traces-endpoint', 'http://127.0.0.1:24999', '--trace-sample-ratio', 'most'], {}, /trace-sample-ratio/],
  ['an endpoint of another scheme', ['--otlp-traces-endpoint', 'ftp://127.0.0.1:24999'], {}, /--otlp-traces-endpoint must be an http:\/\/ or https:\/\/ URL/],
  ['a bad OTEL_ variable', ['--otlp-traces-endpoint', 'http://127.0.0.1:24999'], { OTEL_BSP_MAX_QUEUE_SIZE: 'lots' }, /OTEL_BSP_MAX_QUEUE_SIZE/],
] as const) {
  test(`portico serve refuses ${what} at startup (exit 2)`, async () => {
    const r = await runPortico(['serve', '--model-path', QWEN3, '--mock', 'echo', '--http-port', '0', ...args], env);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
  });
}
