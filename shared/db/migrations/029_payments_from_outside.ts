/**
 * Money from outside (docs/payments.md).
 * - `x402_payments`: one row per payment the gateway verified (a paid call's or a top-up's), keyed by the SHA-256 of
 *   its signed payload, so one payment is never taken twice. The payload and its requirements are kept sealed until
 *   the payment is collected or dropped (only they can settle it), then cleared. `state`: `verified` → `collecting`
 *   → `collected` | `failed`; `verified` → `void` (nothing owed: an unbilled call).
 * - `payouts`: one row per withdrawal: `pending` (the entry author → payouts:pending posted), `sent` (the transfer's
 *   hash and signed bytes recorded before it was broadcast), then `paid` (posted on to the chain's account) or
 *   `reversed` (the transfer failed: the money is back).
 * - `accounts.payout_address`: where an author's payouts go.
 * - `receipts.payment`: the payment of a paid call, as its receipt records it (signed with the receipt).
 */
export const name = '029_payments_from_outside';

export const statements = [
  `CREATE TABLE x402_payments (
     key             text PRIMARY KEY,
     purpose         text NOT NULL CHECK (purpose IN ('call', 'topup')),
     network         text NOT NULL,
     scheme          text NOT NULL,
     payer           text NOT NULL,
     authorized      numeric(78, 0) NOT NULL CHECK (authorized >= 0),
     mandate_id      text UNIQUE REFERENCES mandates (id),
     account         text REFERENCES accounts (handle),
     idempotency_key text,
     sealed          text,
     state           text NOT NULL CHECK (state IN ('verified', 'collecting', 'collected', 'failed', 'void')),
     collected       numeric(78, 0) CHECK (collected >= 0),
     transaction     text,
     error           text,
     created_at      timestamptz NOT NULL DEFAULT now(),
     updated_at      timestamptz NOT NULL DEFAULT now(),
     CHECK ((purpose = 'call') = (mandate_id IS NOT NULL)),
     CHECK ((purpose = 'topup') = (account IS NOT NULL))
   )`,
  `CREATE UNIQUE INDEX x402_payments_idempotency ON x402_payments (payer, idempotency_key) WHERE idempotency_key IS NOT NULL`,
  `CREATE INDEX x402_payments_unfinished ON x402_payments (state) WHERE state IN ('verified', 'collecting')`,
  `CREATE TABLE payouts (
     id          text PRIMARY KEY,
     account     text NOT NULL REFERENCES accounts (handle),
     network     text NOT NULL,
     currency    text NOT NULL,
     amount      bigint NOT NULL CHECK (amount > 0),
     units       numeric(78, 0) NOT NULL CHECK (units > 0),
     address     text NOT NULL,
     state       text NOT NULL CHECK (state IN ('pending', 'sent', 'paid', 'reversed')),
     tx_hash     text,
     raw_tx      text,
     error       text,
     created_at  timestamptz NOT NULL DEFAULT now(),
     updated_at  timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE INDEX payouts_account ON payouts (account, created_at DESC)`,
  `CREATE INDEX payouts_unfinished ON payouts (state) WHERE state IN ('pending', 'sent')`,
  `ALTER TABLE accounts ADD COLUMN payout_address text`,
  `ALTER TABLE receipts ADD COLUMN payment jsonb`,
];
