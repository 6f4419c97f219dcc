/**
 * What a receipt's signature and its log leaf cover (docs/receipts.md, "The signed form"): the receipt as the API
 * shows it, without `signature` (which it cannot cover) and without `children` (each child is a receipt of its own,
 * signed and logged when it was written) — its RFC 8785 canonical JSON, in UTF-8.
 *
 * The signature is a compact JWS with a detached payload, `{"alg":"EdDSA","kid":…,"typ":"holon-receipt"}`; the leaf
 * is SHA-256(0x00 ‖ those bytes), RFC 6962's leaf hash.
 */
import { canonicalJson } from '../core/canonical-json.js';
import { leafHash } from '../core/merkle.js';
import type { SigningKey } from '../signing/keys.js';
import type { ReceiptView } from './store.js';

/** The JWS `typ` of a receipt's signature: a receipt's signature never passes for a mandate's. */
export const RECEIPT_JWS_TYPE = 'holon-receipt';

/** The fields a receipt's signature covers: all but `signature` and `children`. */
export type SignedReceiptForm = Omit<ReceiptView, 'signature' | 'children'>;

function signedForm(receipt: ReceiptView | SignedReceiptForm): SignedReceiptForm {
  const { signature: _signature, children: _children, ...own } = receipt as ReceiptView;
  return own;
}

/** The bytes the signature and the leaf hash are taken over. */
export function receiptBytes(receipt: ReceiptView | SignedReceiptForm): Buffer {
  return Buffer.from(canonicalJson(signedForm(receipt)), 'utf8');
}

/**
 * A receipt's signature and its leaf, from one canonical form: what the writing transaction stores. `offThread`: one
 * of many signed at once (keys.ts `signDetached`).
 */
export async function signAndHash(key: SigningKey, receipt: ReceiptView, offThread = false): Promise<{ signature: string; leaf: Buffer }> {
  const bytes = receiptBytes(receipt);
  return { signature: await key.signDetached(bytes, RECEIPT_JWS_TYPE, { offThread }), leaf: leafHash(bytes) };
}

/** The receipt's leaf in the log: SHA-256(0x00 ‖ canonical receipt). */
export function receiptLeaf(receipt: ReceiptView | SignedReceiptForm): Buffer {
  return leafHash(receiptBytes(receipt));
}
