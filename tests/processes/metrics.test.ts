/**
 * GET /metrics (shared/platform/metrics.ts, docs/operating.md "Metrics, traces and logs"), on real Postgres and Redis:
 * after known traffic every counter moved by exactly what that traffic did, histograms counted each observation, the
 * holds gauge follows a call in flight and its settlement, and no label carries a mandate id, a key or an input.
 * Hosted, /metrics takes the admin key only; the metrics port (HOLON_METRICS_PORT) serves /metrics and /healthz for a
 * runner process that has no other HTTP port. Nothing here is measured by time.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { gatewayTest } from '../support/gateway-fixture.js';
import { startTestCluster, startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { ADMIN_KEY, send, signUp } from '../support/hosted.js';
import { labelValues, parsePrometheus, sampleValue, type Sample } from '../support/prometheus.js';
import { freePort } from '../support/processes.js';
import { poll } from '../support/poll.js';
import type { Schema, RefusalWithReceipt } from '../support/http.js';

/** Assertions that hold soon: retried every 50 ms for up to 15 s (poll's `assert` form). */
const SOON = { assert: true, timeoutMs: 15_000, intervalMs: 50 } as const;

async function scrape(base: string, key?: string): Promise<Sample[]> {
  const r = await fetch(`${base}/metrics`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await r.text());
}

/** Every label value, checked against what must never be a label. */
function expectNoSensitiveLabels(samples: readonly Sample[], secrets: readonly string[]): void {
  const values = [...labelValues(samples)];
  for (const secret of secrets)
    expect(
      values.filter((v) => v.includes(secret)),
      secret,
    ).toEqual([]);
}

/** A webhook receiver on loopback that answers 200 and counts what it got. */
async function receiver(): Promise<{ url: string; received: () => number; close(): Promise<void> }> {
  let n = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n += 1;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/hook`, received: () => n, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('GET /metrics after traffic', () => {
  gatewayTest('calls by status and error code, latency and run histograms, queues, settle lag, webhooks, pool', async ({ gateway: g }) => {
    await g.mandate({});
    await g.mandate({ id: 'alice/narrow', allow: { agents: ['fixtures/*'], capabilities: ['test.*'] } });
    const hook = await receiver();
    try {
      const ok = await g.post<Schema<'CallSucceeded'>>('/v0/calls', {
        mandate: 'alice/test',
        agent: 'examples/flaky',
        input: { mode: 'ok' },
        callback_url: hook.url,
      });
      expect(ok.status).toBe(200);
      const billedError = await g.post<Schema<'CallFailed'>>('/v0/calls', {
        mandate: 'alice/test',
        agent: 'examples/flaky',
        input: { mode: 'declared_billed' },
      });
      expect(billedError.status).toBe(502);
      expect(billedError.body.receipt).toMatchObject({ billed: true, error: 'partial' });
      const denied = await g.post<RefusalWithReceipt>('/v0/calls', { mandate: 'alice/narrow', agent: 'examples/flaky', input: { mode: 'ok' } });
      expect(denied.status).toBe(403);
      expect(denied.body.receipt.status).toBe('denied');
      await poll(async () => expect(hook.received()).toBe(1), { what: 'the webhook', ...SOON });

      let m: Sample[] = [];
      await poll(
        async () => {
          m = await scrape(g.url);
          expect(sampleValue(m, 'holon_webhook_attempts_total', { verdict: 'delivered' })).toBe(1);
          // The delivery's job ends just after its attempt is counted.
          expect(sampleValue(m, 'holon_queue_jobs', { queue: 'deliver', state: 'active' })).toBe(0);
        },
        { what: 'the delivered attempt in the metrics, its job ended', ...SOON },
      );
      // Receipts: one per call, by status and error code; the agent's own code is `agent_declared`, never `partial`.
      expect(sampleValue(m, 'holon_calls_total', { status: 'succeeded', error_code: 'none', agent: 'examples/flaky' })).toBe(1);
      expect(sampleValue(m, 'holon_calls_total', { status: 'failed', error_code: 'agent_declared', agent: 'examples/flaky' })).toBe(1);
      expect(sampleValue(m, 'holon_calls_total', { status: 'denied', error_code: 'denied', agent: 'examples/flaky' })).toBe(1);
      expect(sampleValue(m, 'holon_calls_total')).toBe(3);
      // POST /v0/calls by outcome class; the runs by runtime and outcome; the queues' first deliveries; settle lag.
      expect(sampleValue(m, 'holon_call_request_duration_seconds_count', { outcome: 'succeeded' })).toBe(1);
      expect(sampleValue(m, 'holon_call_request_duration_seconds_count', { outcome: 'failed' })).toBe(1);
      expect(sampleValue(m, 'holon_call_request_duration_seconds_count', { outcome: 'refused' })).toBe(1);
      expect(sampleValue(m, 'holon_call_request_duration_seconds_bucket', { outcome: 'refused', le: '+Inf' })).toBe(1);
      expect(sampleValue(m, 'holon_run_duration_seconds_count', { runtime: 'node', outcome: 'success' })).toBe(1);
      expect(sampleValue(m, 'holon_run_duration_seconds_count', { runtime: 'node', outcome: 'declared_error' })).toBe(1);
      // Run where they were admitted (shared/calls/run/run-here.ts): no run job.
      expect(sampleValue(m, 'holon_queue_wait_seconds_count', { queue: 'run' }) ?? 0).toBe(0);
      // Settled by the settler of this process without the settle queue (`CallEngine.close` → `settle`): no settle job.
      expect(sampleValue(m, 'holon_queue_wait_seconds_count', { queue: 'settle' }) ?? 0).toBe(0);
      expect(sampleValue(m, 'holon_queue_wait_seconds_count', { queue: 'callback' })).toBe(1);
      expect(sampleValue(m, 'holon_queue_wait_seconds_count', { queue: 'deliver' })).toBe(1);
      expect(sampleValue(m, 'holon_settle_lag_seconds_count')).toBe(2);
      // Read at scrape time: the queues are empty, nothing is held, the pool is this process's.
      for (const queue of ['run', 'settle', 'callback', 'deliver', 'evaluate'])
        for (const state of ['waiting', 'active', 'delayed']) expect(sampleValue(m, 'holon_queue_jobs', { queue, state }), `${queue} ${state}`).toBe(0);
      // A currency shows once this process has seen a hold in it (the next test): 0 or absent here.
      expect(sampleValue(m, 'holon_holds_outstanding') ?? 0).toBe(0);
      expect(sampleValue(m, 'holon_holds_outstanding_micros') ?? 0).toBe(0);
      expect(sampleValue(m, 'holon_db_pool_max')).toBe(g.gw.config.dbPool);
      expect(sampleValue(m, 'holon_db_pool_connections', { state: 'used' })).toBeGreaterThanOrEqual(0);
      expect(sampleValue(m, 'holon_mcp_sessions')).toBe(0);
      expect(sampleValue(m, 'holon_scrape_errors_total')).toBeUndefined();
      // Every sample names its process's roles; nothing sensitive is a label.
      expect(new Set(m.map((s) => s.labels.role))).toEqual(new Set(['gateway']));
      expectNoSensitiveLabels(m, ['alice/test', 'alice/narrow', 'declared_billed', ok.body.receipt.id, hook.url, '127.0.0.1']);
    } finally {
      await hook.close();
    }
  });

  test('holds outstanding: the worst case while a call runs, 0 once it ended (here: cancelled)', async () => {
    await useAudited(await startTestGateway(), async (g: TestGateway) => {
      await g.mandate({});
      const file = path.join(mkdtempSync(path.join(tmpdir(), 'holon-metrics-')), 'patient.log');
      const r = await fetch(`${g.url}/v0/calls`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', prefer: 'respond-async' },
        body: JSON.stringify({ mandate: 'alice/test', agent: 'fixtures/patient', input: { file, ms: 30_000 } }),
      });
      expect(r.status).toBe(202);
      const callId = ((await r.json()) as { call: { id: string } }).call.id;
      const inFlight = await scrape(g.url);
      expect(sampleValue(inFlight, 'holon_holds_outstanding', { currency: 'EUR' })).toBe(1);
      expect(sampleValue(inFlight, 'holon_holds_outstanding_micros', { currency: 'EUR' })).toBe(20_000);

      expect((await g.post(`/v0/calls/${callId}/cancel`, {})).status).toBe(200);
      // The gauge is read at most every 5 s: scrape until the next read shows the hold gone.
      await poll(
        async () => {
          const after = await scrape(g.url);
          expect(sampleValue(after, 'holon_holds_outstanding', { currency: 'EUR' })).toBe(0);
          expect(sampleValue(after, 'holon_holds_outstanding_micros', { currency: 'EUR' })).toBe(0);
          expect(sampleValue(after, 'holon_calls_total', { status: 'failed', error_code: 'cancelled', agent: 'fixtures/patient' })).toBe(1);
        },
        { what: 'the hold gone from the gauges', ...SOON },
      );
    });
  });
});

describe('GET /metrics, hosted', () => {
  test('the admin key only (401 without a key, 403 with a user key); rate-limit refusals by rule; no key is a label', async () => {
    const g = await startTestGateway({
      hosted: true,
      config: {
        rateLimits: { perAddressPerMin: 10_000, perAccountPerMin: 10_000, signupsPerHour: 1, publishesPerHour: 30, draftsPerHour: 60, evaluationsPerHour: 10 },
      },
    });
    await useAudited(g, async () => {
      const alice = await signUp(g.url, 'alice');
      const second = await send(g.url, 'POST', '/v0/signup', { body: { handle: 'bob', email: 'bob@example.test' } });
      expect(second.status).toBe(429);

      const none = await send(g.url, 'GET', '/metrics');
      expect(none.status).toBe(401);
      expect(none.body.error.code).toBe('unauthorized');
      const user = await send(g.url, 'GET', '/metrics', { key: alice.human });
      expect(user.status).toBe(403);
      expect((await send(g.url, 'GET', '/metrics', { key: alice.sandboxAgent })).status).toBe(403);

      const m = await scrape(g.url, ADMIN_KEY);
      expect(sampleValue(m, 'holon_rate_limit_refusals_total', { rule: 'signup' })).toBe(1);
      expect(sampleValue(m, 'holon_rate_limit_refusals_total')).toBe(1);
      expectNoSensitiveLabels(m, [ADMIN_KEY, alice.human, alice.sandboxAgent, 'alice', 'bob@example.test']);
    });
  });
});

describe('the metrics port', () => {
  test('a runner process (no other HTTP port) serves GET /metrics and GET /healthz on HOLON_METRICS_PORT', async () => {
    const g = await startTestGateway({ roles: ['api', 'settler'] });
    const { cluster, stop } = await startTestCluster({ beside: g });
    try {
      const port = await freePort();
      await cluster.start('runner', { env: { HOLON_METRICS_PORT: String(port) } });
      const base = `http://127.0.0.1:${port}`;
      const health = await fetch(`${base}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ ok: true });
      // A call run by that process shows in its own metrics.
      await g.mandate({});
      expect((await g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/flaky', input: { mode: 'ok' } })).status).toBe(200);
      const m = await scrape(base);
      expect(new Set(m.map((s) => s.labels.role))).toEqual(new Set(['runner']));
      expect(sampleValue(m, 'holon_run_duration_seconds_count', { runtime: 'node', outcome: 'success' })).toBe(1);
      expect(sampleValue(m, 'holon_queue_wait_seconds_count', { queue: 'run' })).toBe(1);
      expect(sampleValue(m, 'holon_queue_jobs', { queue: 'run', state: 'waiting' })).toBe(0);
      expect(sampleValue(m, 'process_cpu_seconds_total')).toBeGreaterThan(0);
      expect((await fetch(`${base}/v0/calls`)).status).toBe(404);
      expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(405);
    } finally {
      await stop();
      await g.stop();
    }
  });
});
