/**
 * Every billable outcome settles, whoever pays whom: the payer, the author, the upstream author of a fork and the
 * platform may be the same account, and the amounts may be so small that the platform's fee rounds to nothing. A
 * settlement that nets to nothing per account is still billed (receipt, `spent`, settled hold) and the audit passes.
 *
 * The calls go through the real admission, runner and settlement code on Postgres; only the agent is replaced by a
 * runtime that answers at once with what the case says.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { Manifest } from '../../shared/core/manifest/types.js';
import { audit } from '../../shared/ledger/audit.js';
import { readBalance } from '../../shared/ledger/accounts.js';
import { creditSignup } from '../../shared/ledger/demo-credit.js';
import { saveMandate } from '../../shared/mandates/store.js';
import { createMessaging } from '../../shared/messaging/index.js';
import { createLogger } from '../../shared/platform/log.js';
import { settleCall } from '../../shared/calls/settle/settle.js';
import type { RunResult } from '../../shared/runtimes/types.js';
import { shippedAgentsContext } from '../support/service-context.js';
import { dbTest } from '../support/db.js';
import { buildManifest, buildMandate } from '../support/manifest-builder.js';
import { generateSigningKey } from '../../shared/signing/keys.js';
import { createCallEngine } from '../../shared/calls/engine.js';

const test = dbTest('postgres');
const PEOPLE = ['alice', 'bob', 'carol'] as const;

interface Case {
  payer: (typeof PEOPLE)[number];
  author: (typeof PEOPLE)[number];
  upstream: (typeof PEOPLE)[number] | null;
  royalty: { num: bigint; den: bigint };
  price: bigint;
  chargeOn: 'success' | 'attempt';
  result: 'output' | 'billed_error';
}

const arbCase: fc.Arbitrary<Case> = fc.record({
  payer: fc.constantFrom(...PEOPLE),
  author: fc.constantFrom(...PEOPLE),
  upstream: fc.option(fc.constantFrom(...PEOPLE), { nil: null }),
  royalty: fc.constantFrom({ num: 0n, den: 1n }, { num: 1n, den: 10n }, { num: 1n, den: 2n }, { num: 9n, den: 10n }),
  // Tiny amounts (the fee rounds to 0 below 10 micro-units), and a few ordinary ones.
  price: fc.oneof(fc.bigInt({ min: 1n, max: 25n }), fc.constantFrom(100n, 35_000n)),
  chargeOn: fc.constantFrom('success' as const, 'attempt' as const),
  result: fc.constantFrom('output' as const, 'billed_error' as const),
});

test('every billable outcome settles, whatever accounts coincide, and the audit passes', async ({ db }) => {
  const messaging = await createMessaging();
  const log = createLogger('test', 'silent');
  for (const who of PEOPLE) await creditSignup(db.knex, who, 100_000_000n);
  let n = 0;
  try {
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        n += 1;
        const errors = { refused: { description: 'a billed refusal', billed: true } };
        const pricing = { model: 'per_run' as const, currency: 'EUR', amount: c.price, chargeOn: c.chargeOn };
        const agents: Manifest[] = [];
        let lineage: Manifest['lineage'];
        if (c.upstream) {
          const upstream = buildManifest({
            id: `${c.upstream}/base${n}`,
            pricing,
            interface: { input: { type: 'object' }, output: { type: 'object' }, errors, examples: [] },
          });
          agents.push(upstream);
          lineage = { forkedFrom: { id: upstream.id, version: upstream.version }, royalty: c.royalty };
        }
        const agent = buildManifest({
          id: `${c.author}/agent${n}`,
          pricing,
          interface: { input: { type: 'object' }, output: { type: 'object' }, errors, examples: [] },
          ...(lineage ? { lineage } : {}),
        });
        agents.push(agent);
        const result: RunResult = c.result === 'output' ? { kind: 'output', output: { ok: true } } : { kind: 'error', code: 'refused' };
        const ctx = shippedAgentsContext(db.knex, agents, messaging, log);
        const mandate = buildMandate({
          id: `${c.payer}/m${n}`,
          issuer: c.payer,
          grantee: `${c.payer}/assistant`,
          allow: { agents: PEOPLE.map((p) => `${p}/*`) },
          budget: { total: 1_000_000n },
        });
        await saveMandate(db.knex, mandate, generateSigningKey());
        const before = await readBalance(db.knex, c.payer, 'EUR');

        const submitted = await createCallEngine(ctx).submit({ mandateId: mandate.id, agent: agent.id, input: {} });
        expect(submitted.kind).toBe('queued');
        if (submitted.kind !== 'queued') return;
        await createCallEngine(ctx).run(submitted.callId, { runtimes: { run: async () => result } });
        expect(await settleCall(ctx, submitted.callId)).toBe('settled');

        const billed = c.result === 'output' || c.chargeOn === 'attempt';
        const receipt = await db.knex('receipts').where({ id: submitted.callId }).first('billed', 'cost_own', 'entry_id');
        expect(receipt.billed).toBe(billed);
        expect(BigInt(receipt.cost_own)).toBe(billed ? c.price : 0n);
        const stored = await db.knex('mandates').where({ id: mandate.id }).first('spent', 'reserved');
        expect([BigInt(stored.spent), BigInt(stored.reserved)]).toEqual([billed ? c.price : 0n, 0n]);
        const hold = await db.knex('holds').where({ id: submitted.callId }).first('status');
        expect(hold.status).toBe(billed ? 'settled' : 'released');
        // The payer's available money is back to what it was, less what was charged and what came back to them.
        const after = await readBalance(db.knex, c.payer, 'EUR');
        expect(after.held).toBe(before.held);
        expect(after.balance).toBeLessThanOrEqual(before.balance);
        const report = await audit(db.knex);
        expect(report.problems).toEqual([]);
      }),
      { numRuns: 120, seed: 20261201 },
    );
  } finally {
    await messaging.close();
  }
});
