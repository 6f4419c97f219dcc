/**
 * A payer with a mandate and demo credit, and the row of a call admitted under it (`holon_admit_one`): for tests of the
 * admission and of what happens to an admitted call, without the HTTP and the registry around them.
 */
import { ensureAccount } from '../../shared/ledger/accounts.js';
import { creditSignup } from '../../shared/ledger/demo-credit.js';
import { ensureBalanceRow } from '../../shared/ledger/holds.js';
import type { AdmittedCall } from '../../shared/ledger/money-functions.js';
import { saveMandate } from '../../shared/mandates/store.js';
import type { TestDatabase } from './db.js';
import { buildMandate } from './manifest-builder.js';
import { generateSigningKey } from '../../shared/signing/keys.js';

export const row = (id: string, mandateId: string, payer: string, worst: bigint): AdmittedCall => ({
  id,
  root_id: id,
  parent_id: null,
  mandate_id: mandateId,
  caller: `${payer}/assistant`,
  agent_id: 'acme/noop',
  agent_version: '1.0.0',
  payer,
  currency: 'EUR',
  worst_case: worst.toString(),
  max_cost: null,
  depth: 0,
  delegated: false,
  timeout_ms: 30_000,
  deadline_at: new Date(Date.now() + 330_000),
  callback_url: null,
});

export async function world(db: TestDatabase, payer: string, budget: bigint, credit: bigint) {
  const mandate = buildMandate({ id: `${payer}/m`, issuer: payer, grantee: `${payer}/assistant`, budget: { total: budget } });
  await saveMandate(db.knex, mandate, generateSigningKey());
  await ensureAccount(db.knex, payer);
  await ensureBalanceRow(db.knex, payer, 'EUR');
  await creditSignup(db.knex, payer, credit);
  return mandate.id;
}
