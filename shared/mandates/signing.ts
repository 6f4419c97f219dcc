/**
 * Signed mandates (docs/receipts.md "Signed mandates"): every mandate the gateway stores is signed when it is
 * stored — a compact JWS with a detached payload, `{"alg":"EdDSA","kid":…,"typ":"holon-mandate"}`, over the RFC 8785
 * canonical JSON of its statement: the mandate document as stored, the issuer the gateway authenticated, the time,
 * and, for a sub-mandate, its parent's id and the SHA-256 of the parent's statement. A chain of delegation is then
 * checked link by link: each statement's signature, each `parent.sha256` against the statement above it, and each
 * link attenuating its parent (shared/core/mandate/attenuation.ts).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';
import type { mandateToDoc } from '../core/mandate/validate.js';
import type { SigningKey } from '../signing/keys.js';

export const MANDATE_JWS_TYPE = 'holon-mandate';

/** What a mandate's signature covers. */
export interface MandateStatement {
  mandate: ReturnType<typeof mandateToDoc>;
  /** The issuer as the gateway authenticated it: the paying account of a root mandate, the acting agent of a sub-mandate. */
  issuer: string;
  /** When the gateway stored and signed it (RFC 3339, UTC). */
  signed_at: string;
  /** A sub-mandate's parent: its id and the SHA-256 (base64url) of its statement; null for a root mandate (or a parent stored unsigned). */
  parent: { id: string; sha256: string | null } | null;
}

export function statementBytes(statement: MandateStatement): Buffer {
  return Buffer.from(canonicalJson(statement), 'utf8');
}

/** SHA-256 of a statement's canonical bytes, base64url: what its children's `parent.sha256` is. */
export function statementHash(statement: MandateStatement): string {
  return createHash('sha256').update(statementBytes(statement)).digest('base64url');
}

/** The statement of a mandate stored now, and its signature. */
export async function signMandate(
  key: SigningKey,
  fields: { doc: MandateStatement['mandate']; issuer: string; at: Date; parent: { id: string; statement: MandateStatement | null } | null },
): Promise<{ statement: MandateStatement; signature: string }> {
  const statement: MandateStatement = {
    mandate: fields.doc,
    issuer: fields.issuer,
    signed_at: fields.at.toISOString(),
    parent: fields.parent ? { id: fields.parent.id, sha256: fields.parent.statement ? statementHash(fields.parent.statement) : null } : null,
  };
  return { statement, signature: await key.signDetached(statementBytes(statement), MANDATE_JWS_TYPE) };
}
