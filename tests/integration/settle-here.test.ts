/**
 * Settling where the call was closed (`CallEngine.close`, shared/calls/engine.ts): in a process that runs a
 * settler, `engine.close` hands the call to `engine.settle` directly and no settle job is queued; when that hand-off fails, the call
 * goes to the settle queue as it always did; without a settler in the process, the queue. The call row in
 * `settling` is the durable hand-off in every case.
 */
import { describe, expect, vi } from 'vitest';
import { SETTLE_QUEUE } from '../../shared/calls/wire.js';
import { unbilled } from '../../shared/calls/call-outcome.js';
import { claimCall } from '../../shared/calls/transitions.js';
import { createCallEngine } from '../../shared/calls/engine.js';
import type { CallEngine } from '../../shared/calls/engine-types.js';
import { DEFAULT_SETTINGS, type ServiceContext } from '../../shared/context.js';
import { admitCall } from '../../shared/ledger/money-functions.js';
import { createMessaging } from '../../shared/messaging/index.js';
import { createLogger } from '../../shared/platform/log.js';
import { createRegistry } from '../../shared/registry/registry.js';
import { row, world } from '../support/admitted-calls.js';
import { dbTest, type TestDatabase } from '../support/db.js';
import { generateSigningKey } from '../../shared/signing/keys.js';

const test = dbTest('postgres');

/** A call admitted and claimed (`running`), and an engine that settles here with `settleHere` (none: no settler here). */
async function runningCall(db: TestDatabase, id: string, settleHere?: CallEngine['settle']): Promise<CallEngine> {
  const messaging = await createMessaging();
  const ctx: ServiceContext = {
    db: db.knex,
    registry: createRegistry([]),
    messaging,
    log: createLogger('test', 'silent'),
    settings: DEFAULT_SETTINGS,
    now: () => Date.now(),
    signingKey: generateSigningKey(),
  };
  const engine = createCallEngine(ctx, { settlesHere: settleHere !== undefined });
  if (settleHere) vi.spyOn(engine, 'settle').mockImplementation(settleHere);
  const mandateId = await world(db, `${id}-payer`, 1_000_000n, 1_000_000n);
  expect(await admitCall(db.knex, row(id, mandateId, `${id}-payer`, 10n))).toBe('reserved');
  expect(await claimCall(db.knex, id)).not.toBeNull();
  return engine;
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
    const engine = await runningCall(db, 'here', async (callId) => {
      handed.push(callId);
      return 'settled';
    });
    try {
      expect(await engine.close('here', 'running', unbilled('gateway_error'))).toBe(true);
      expect(handed).toEqual(['here']);
      expect(await engine.resources.messaging.queues.counts(SETTLE_QUEUE)).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
      expect((await db.knex('calls').where({ id: 'here' }).first('status')).status).toBe('settling');
    } finally {
      await releaseHold(db, 'here');
      await engine.resources.messaging.close();
    }
  });

  test('a hand-off that fails: the call goes to the settle queue', async ({ db }) => {
    const engine = await runningCall(db, 'fails', async () => {
      throw new Error('the batch could not commit');
    });
    try {
      expect(await engine.close('fails', 'running', unbilled('gateway_error'))).toBe(true);
      expect((await engine.resources.messaging.queues.counts(SETTLE_QUEUE)).waiting).toBe(1);
    } finally {
      await releaseHold(db, 'fails');
      await engine.resources.messaging.close();
    }
  });

  test('without a settler in the process: the settle queue', async ({ db }) => {
    const engine = await runningCall(db, 'queue');
    try {
      expect(await engine.close('queue', 'running', unbilled('gateway_error'))).toBe(true);
      expect((await engine.resources.messaging.queues.counts(SETTLE_QUEUE)).waiting).toBe(1);
      // A second close finds the call no longer running: nothing more is handed out.
      expect(await engine.close('queue', 'running', unbilled('gateway_error'))).toBe(false);
      expect((await engine.resources.messaging.queues.counts(SETTLE_QUEUE)).waiting).toBe(1);
    } finally {
      await releaseHold(db, 'queue');
      await engine.resources.messaging.close();
    }
  });
});
