/**
 * Who reads a receipt that has no mandate (docs/receipts.md "Who reads a receipt"): a request refused because the
 * mandate it named does not exist still gets its receipt, and that receipt belongs to the account whose key sent the
 * request — `requester`, written only on such a receipt (a receipt with a mandate is its mandate's). Null for a
 * request the dev operator sent, and on every receipt written before this column: then only the operator reads it.
 * Not part of the signed receipt: it decides who may read the receipt, it says nothing about the request.
 * A human's receipt list finds its own through `receipts_requester`.
 */
export const name = '026_receipt_requester';

export const statements = [
  `ALTER TABLE receipts ADD COLUMN requester text,
     ADD CONSTRAINT receipt_requester_only_without_mandate CHECK (requester IS NULL OR mandate_id IS NULL)`,
  `CREATE INDEX receipts_requester ON receipts (requester, created_at DESC) WHERE requester IS NOT NULL`,
];
