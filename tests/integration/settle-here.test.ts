/**
 * Settling where the call was closed (`ServiceContext.settleHere`, services/compose.ts): in a process that runs a
 * settler, `closeCall` hands the call to it directly and no settle job is queued; when that hand-off fails, the call
 * goes to the settle queue as it always did; without a settler in the process, the queue. The call row in
 * `settling` is the durable hand-off in every case.
 */
import { describe, expect } from 'vitest';
import { SETTLE_QUEUE } from '../../shared/calls/jobs.js';
import { unbilled } from '../../shared/calls/outcome.js';
import { claimCall, closeCall } from '../../shared/calls/transitions.js';
import { DEFAULT_SETTINGS, type ServiceContext } from '../../shared/context.js';
import { admitCall } from '../../shared/ledger/money-functions.js';
import { createMessaging } from '../../shared/messaging/index.js';
import { createLogger } from '../../shared/platform/log.js';
import { createRegistry } from '../../shared/registry/registry.js';
import { row, world } from '../support/admitted-calls.js';
import { dbTest, type TestDatabase } from '../support/db.js';
import { generateSigningKey } from '../../shared/signing/keys.js';

const test = dbTest('postgres');

/** A call admitted and claimed (`running`), and a context whose settleHere is `settleHere`. */
async function runningCall(db: TestDatabase, id: string, settleHere?: ServiceContext['settleHere']) {
  const messaging = await createMessaging();
  const ctx: ServiceContext = {
    db: db.knex,
    registry: createRegistry([]),
    messaging,
    log: createLogger('test', 'silent'),
    settings: DEFAULT_SETTINGS,
    now: () => Date.now(),
    signingKey: generateSigningKey(),
    ...(settleHere ? { settleHere } : {}),
  };
  const mandateId = await world(db, `${id}-payer`, 1_000_000n, 1_000_000n);
  expect(await admitCall(db.knex, row(id, mandateId, `${id}-payer`, 10n))).toBe('reserved');
  expect(await claimCall(db.knex, id)).not.toBeNull();
  return ctx;
}

/** Settles what the test left `settling`, so the hold is not left behind for the audit. */
async function releaseHold(db: TestDatabase, id: string) {
  await db.knex('holds').where({ id, status: 'held' }).update({ status: 'released', resolved_at: new Date() });
  await db
    .knex('account_balances')
    .where({ account: `${id}-payer` })
    .decrement('held', 10);
  await db
    .knex('mandates')
    .where({ id: `${id}-payer/m` })
    .decrement('reserved', 10);
}

describe('closing a call hands it to a settler', () => {
  test('with a settler in the process: settled there, no settle job', async ({ db }) => {
    const handed: string[] = [];
    const ctx = await runningCall(db, 'here', async (callId) => handed.push(callId));
    try {
      expect(await closeCall(ctx, 'here', 'running', unbilled('gateway_error'))).toBe(true);
      expect(handed).toEqual(['here']);
      expect(await ctx.messaging.queues.counts(SETTLE_QUEUE)).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
      expect((await db.knex('calls').where({ id: 'here' }).first('status')).status).toBe('settling');
    } finally {
      await releaseHold(db, 'here');
      await ctx.messaging.close();
    }
  });

  test('a hand-off that fails: the call goes to the settle queue', async ({ db }) => {
    const ctx = await runningCall(db, 'fails', async () => {
      throw new Error('the batch could not commit');
    });
    try {
      expect(await closeCall(ctx, 'fails', 'running', unbilled('gateway_error'))).toBe(true);
      expect((await ctx.messaging.queues.counts(SETTLE_QUEUE)).waiting).toBe(1);
    } finally {
      await releaseHold(db, 'fails');
      await ctx.messaging.close();
    }
  });

  test('without a settler in the process: the settle queue', async ({ db }) => {
    const ctx = await runningCall(db, 'queue');
    try {
      expect(await closeCall(ctx, 'queue', 'running', unbilled('gateway_error'))).toBe(true);
      expect((await ctx.messaging.queues.counts(SETTLE_QUEUE)).waiting).toBe(1);
      // A second close finds the call no longer running: nothing more is handed out.
      expect(await closeCall(ctx, 'queue', 'running', unbilled('gateway_error'))).toBe(false);
      expect((await ctx.messaging.queues.counts(SETTLE_QUEUE)).waiting).toBe(1);
    } finally {
      await releaseHold(db, 'queue');
      await ctx.messaging.close();
    }
  });
});
