/**
 * An account's statement (shared/ledger/statement.ts, GET /v0/statement) sums what the account paid in a period:
 * its billed receipts by `payer`, found through this index rather than by reading every receipt. Only billed
 * receipts are in it (the others cost their payer nothing).
 */
export const name = '018_receipts_by_payer';

export const statements = [`CREATE INDEX receipts_payer ON receipts (payer, created_at) WHERE billed`];
