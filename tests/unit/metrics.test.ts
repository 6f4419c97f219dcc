/**
 * shared/platform/metrics.ts and its settings, without services: one registry per gateway (two side by side), the
 * closed label sets, and scrape-time reads that can neither hang a scrape nor lose the last value; HOLON_METRICS_PORT,
 * HOLON_METRICS_HOST and the OTLP endpoints as shared/platform/config.ts reads them.
 */
import { describe, expect, test } from 'vitest';
import { callOutcomeClass, createMetrics, runErrorLabel } from '../../shared/platform/metrics.js';
import { ConfigError, loadConfig } from '../../shared/platform/config.js';
import { parsePrometheus, sampleValue } from '../support/prometheus.js';

const scrape = async (m: ReturnType<typeof createMetrics>) => parsePrometheus(await m.text());

describe('metrics', () => {
  test('each gateway has its own registry: two in one process count apart, under their own role', async () => {
    const a = createMetrics({ role: 'api' });
    const b = createMetrics({ role: 'runner' });
    a.calls.inc({ status: 'succeeded', error_code: 'none', agent: 'examples/echo-upper' });
    a.calls.inc({ status: 'succeeded', error_code: 'none', agent: 'examples/echo-upper' });
    b.calls.inc({ status: 'denied', error_code: 'denied', agent: 'none' });
    const [sa, sb] = [await scrape(a), await scrape(b)];
    expect(sampleValue(sa, 'holon_calls_total')).toBe(2);
    expect(sampleValue(sb, 'holon_calls_total')).toBe(1);
    expect(sampleValue(sa, 'holon_calls_total', { role: 'api', status: 'succeeded' })).toBe(2);
    expect(sampleValue(sb, 'holon_calls_total', { role: 'runner', status: 'denied' })).toBe(1);
  });

  test("error codes: the gateway's own as they are, any agent's as agent_declared, none for a success", () => {
    expect(runErrorLabel(undefined)).toBe('none');
    for (const code of ['timeout', 'invalid_output', 'agent_error', 'gateway_error', 'cancelled', 'file_not_found']) expect(runErrorLabel(code)).toBe(code);
    for (const code of ['partial', 'not_found', 'mystery', 'a'.repeat(64)]) expect(runErrorLabel(code)).toBe('agent_declared');
  });

  test('POST /v0/calls outcome classes from the HTTP status', () => {
    expect([200, 202, 400, 403, 404, 422, 429, 502, 500, 503].map(callOutcomeClass)).toEqual([
      'succeeded',
      'pending',
      'refused',
      'refused',
      'refused',
      'refused',
      'refused',
      'failed',
      'error',
      'error',
    ]);
  });

  test('scrape-time reads: cached between reads; one that never answers is cut off, counted, and the last value kept', async () => {
    const m = createMetrics({ role: 'settler', cacheMs: 0, timeoutMs: 50 });
    let reads = 0;
    let hang = false;
    m.sources.holds = () => {
      reads += 1;
      return hang ? new Promise(() => {}) : Promise.resolve([{ currency: 'EUR', count: 2, micros: 30_000n }]);
    };
    const first = await scrape(m);
    expect(sampleValue(first, 'holon_holds_outstanding', { currency: 'EUR' })).toBe(2);
    expect(sampleValue(first, 'holon_holds_outstanding_micros', { currency: 'EUR' })).toBe(30_000);
    expect(reads).toBe(1); // the two gauges of one scrape share one read
    hang = true;
    const stuck = await scrape(m);
    expect(sampleValue(stuck, 'holon_holds_outstanding_micros', { currency: 'EUR' })).toBe(30_000);
    expect(sampleValue(stuck, 'holon_scrape_errors_total', { source: 'holds' })).toBe(1);

    const cached = createMetrics({ role: 'api', cacheMs: 60_000 });
    let n = 0;
    cached.sources.queues = async () => [{ queue: 'run', waiting: ++n, active: 0, delayed: 0 }];
    await scrape(cached);
    expect(sampleValue(await scrape(cached), 'holon_queue_jobs', { queue: 'run', state: 'waiting' })).toBe(1);
    expect(n).toBe(1);
  });

  test('a currency once held reports 0 when nothing is held any more', async () => {
    const m = createMetrics({ role: 'api', cacheMs: 0 });
    let rows = [{ currency: 'USD', count: 1, micros: 5n }];
    m.sources.holds = async () => rows;
    expect(sampleValue(await scrape(m), 'holon_holds_outstanding', { currency: 'USD' })).toBe(1);
    rows = [];
    const after = await scrape(m);
    expect(sampleValue(after, 'holon_holds_outstanding', { currency: 'USD' })).toBe(0);
    expect(sampleValue(after, 'holon_holds_outstanding_micros', { currency: 'USD' })).toBe(0);
  });
});

describe('settings', () => {
  test('HOLON_METRICS_PORT: off unless set, 0 to 65535, not PORT; HOLON_METRICS_HOST defaults like HOST', () => {
    expect(loadConfig({}).metricsPort).toBeUndefined();
    expect(loadConfig({ HOLON_METRICS_PORT: '9464' })).toMatchObject({ metricsPort: 9464, metricsHost: '127.0.0.1' });
    expect(loadConfig({ HOLON_METRICS_PORT: '9464', HOLON_HOSTED: '1' }).metricsHost).toBe('0.0.0.0');
    expect(loadConfig({ HOLON_METRICS_HOST: '10.0.0.5' }).metricsHost).toBe('10.0.0.5');
    expect(() => loadConfig({ HOLON_METRICS_PORT: 'nine' })).toThrow(/HOLON_METRICS_PORT must be an integer/);
    expect(() => loadConfig({ HOLON_METRICS_PORT: '8080', PORT: '8080' })).toThrow(/HOLON_METRICS_PORT must differ from PORT/);
  });

  test('tracing: off without an endpoint; the traces endpoint as it is, else the base endpoint + /v1/traces', () => {
    expect(loadConfig({}).tracesUrl).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracesUrl).toBe('http://collector:4318/v1/traces');
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp' }).tracesUrl,
    ).toBe('https://traces.example/otlp');
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(ConfigError);
  });
});
