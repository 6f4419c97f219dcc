/**
 * Retention (docs/webhooks.md "Retention", docs/mcp.md "Tasks"; services/settler/retention.ts, migration 019): after
 * HOLON_DELIVERY_RETENTION_DAYS the settler deletes the delivery log of finished deliveries (delivered, gone, gave up:
 * the row and its attempts) and the MCP task rows of final calls — never a delivery still pending (retrying) or with
 * a re-send still to make, never a working task. The clock is moved through the context (`ctx.now`); the attempts stay
 * append-only for as long as their delivery is kept. Each delete counts in holon_sweeper_actions_total.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { sweepRetention } from '../../services/settler/retention.js';
import { recordTask } from '../../shared/calls/tasks.js';
import { askResend } from '../../shared/webhooks/deliveries.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { poll } from '../support/poll.js';
import { parsePrometheus, sampleValue } from '../support/prometheus.js';
import { testWebhookSettings } from '../support/webhook-settings.js';
import type { Schema, RefusalWithReceipt, Answer } from '../support/http.js';

const DAY_MS = 86_400_000;

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  const list = cleanups.reverse();
  cleanups = [];
  for (const c of list) await c().catch(() => {});
});

/** A receiver on loopback answering every request with `status`. */
async function receiver(status: number): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(status).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

async function asyncCall(g: TestGateway, body: Record<string, unknown>): Promise<string> {
  const r = await g.post<Schema<'CallQueued'>>('/v0/calls', { mandate: 'alice/test', ...body }, { prefer: 'respond-async' });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return r.body.call.id as string;
}

async function deliveryState(g: TestGateway, callId: string, state: string): Promise<void> {
  await poll(async () => (await g.db.knex('webhook_deliveries').where({ call_id: callId }).first('state'))?.state === state, {
    what: `the delivery of ${callId} to be ${state}`,
    timeoutMs: 15_000,
  });
}

const deliveredCall = (g: TestGateway, url: string, text: string) => asyncCall(g, { agent: 'examples/echo-upper', input: { text }, callback_url: url });

test('finished deliveries and the tasks of final calls go after the retention; pending, re-sending and working ones stay', async () => {
  // A second attempt a day after the first: a failing delivery stays pending (retrying) for the whole test.
  const webhooks = testWebhookSettings({ scheduleMs: [0, DAY_MS] });
  await useAudited(await startTestGateway({ config: { webhooks, deliveryRetentionDays: 30 } }), async (g) => {
    await g.mandate({});
    await g.mandate({ id: 'alice/narrow', allow: { agents: ['fixtures/*'], capabilities: ['test.*'] } });
    const [ok, failing, gone] = [await receiver(204), await receiver(500), await receiver(410)];
    const delivered = await deliveredCall(g, ok, 'delivered');
    const retrying = await deliveredCall(g, failing, 'retrying');
    const goneCall = await deliveredCall(g, gone, 'gone');
    const resending = await deliveredCall(g, ok, 'resending');
    await deliveryState(g, delivered, 'delivered');
    await deliveryState(g, goneCall, 'gone');
    await deliveryState(g, resending, 'delivered');
    await poll(async () => (await g.db.knex('webhook_deliveries').where({ call_id: retrying }).first('attempts'))?.attempts === 1, {
      what: 'the first attempt of the failing delivery',
    });
    // A re-send asked and not yet made (its job not run yet) keeps its delivery.
    await askResend(g.db.knex, `msg_${resending}`);

    // Tasks: one of a settled call, one of a refusal (a receipt, no call row), one of a call still running.
    const denied = await g.post<RefusalWithReceipt>('/v0/calls', { mandate: 'alice/narrow', agent: 'examples/echo-upper', input: { text: 'no' } });
    expect(denied.status).toBe(403);
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'holon-retention-')), 'patient.log');
    const working = await asyncCall(g, { agent: 'fixtures/patient', input: { file, ms: 30_000 } });
    const who = { owner: 'operator', mandateId: 'alice/test' };
    for (const id of [delivered, denied.body.receipt.id as string, working]) await recordTask(g.db.knex, id, who);

    // A streamed call: its two chunk rows go with the rest; a running call's rows would stay (its receipt is not written).
    const streamed = await g.post<any>('/v0/calls', { mandate: 'alice/test', agent: 'fixtures/streamer', input: { n: 2 } });
    expect(streamed.status).toBe(200);

    const knex = g.db.knex;
    const at = (ms: number) => ({ ...g.gw.context, now: () => Date.now() + ms });
    const deliveries = async () => (await knex('webhook_deliveries').orderBy('call_id').pluck('call_id')).sort();
    const attemptsOf = async () => new Set(await knex('webhook_attempts').pluck('delivery_id'));
    const before = { deliveries: await deliveries(), attempts: await attemptsOf() };
    expect(before.deliveries).toEqual([delivered, retrying, goneCall, resending].sort());

    // 29 days on: nothing is old enough.
    expect(await sweepRetention(at(29 * DAY_MS), 30)).toEqual({ deliveries: 0, tasks: 0, events: 0 });
    expect(await deliveries()).toEqual(before.deliveries);

    // 31 days on: the delivered and the gone deliveries go, with their attempts; so do the tasks of final calls.
    expect(await sweepRetention(at(31 * DAY_MS), 30)).toEqual({ deliveries: 2, tasks: 2, events: 2 });
    expect(Number((await knex('call_stream_events').count({ n: '*' }).first())?.n)).toBe(0);
    expect(await deliveries()).toEqual([retrying, resending].sort());
    expect(await attemptsOf()).toEqual(new Set([`msg_${retrying}`, `msg_${resending}`]));
    expect(await knex('mcp_tasks').pluck('call_id')).toEqual([working]);
    const m = parsePrometheus(await g.gw.metrics.text());
    expect(sampleValue(m, 'holon_sweeper_actions_total', { action: 'deliveries_deleted' })).toBe(2);
    expect(sampleValue(m, 'holon_sweeper_actions_total', { action: 'tasks_deleted' })).toBe(2);

    // A deleted log reads as none; a re-send of it is a clear 409.
    expect((await g.get<Answer<'readDelivery', 200>>(`/v0/calls/${delivered}/deliveries`)).body.delivery).toBeNull();
    const resend = await g.post<Schema<'Error'>>(`/v0/calls/${delivered}/deliveries`, {});
    expect(resend.status).toBe(409);
    expect(resend.body.error.code).toBe('no_delivery');

    // The attempts of a kept delivery stay append-only: neither deleted nor changed on their own.
    await expect(
      knex('webhook_attempts')
        .where({ delivery_id: `msg_${retrying}` })
        .del(),
    ).rejects.toThrow(/append-only/);
    await expect(
      knex('webhook_attempts')
        .where({ delivery_id: `msg_${retrying}` })
        .update({ error: 'x' }),
    ).rejects.toThrow(/append-only/);
    await expect(knex.raw('TRUNCATE webhook_attempts CASCADE')).rejects.toThrow(/append-only/);

    // The working call ends (cancelled): its task is final now, and goes at the next sweep past the retention.
    expect((await g.post(`/v0/calls/${working}/cancel`, {})).status).toBe(200);
    await poll(async () => (await knex('receipts').where({ id: working }).first('id')) !== undefined, { what: 'the cancelled call settled' });
    expect(await sweepRetention(at(31 * DAY_MS), 30)).toEqual({ deliveries: 0, tasks: 1, events: 0 });
  });
});
