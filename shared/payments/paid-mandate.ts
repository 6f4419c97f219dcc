/**
 * The mandate the gateway makes for a verified payment (docs/payments.md): issued by the paying wallet
 * (`x402:<address>`), its budget what the payer authorized (in the asset's currency, at the platform's rates), allowing
 * exactly the agent the payment was quoted for, delegation as the agent declares, and expiring once the call could no
 * longer run. Built as a wire document and validated like any mandate, so it reads back exactly as stored.
 */
import { validateMandate } from '../core/mandate/validate.js';
import type { Mandate } from '../core/mandate/types.js';
import { formatAmount, formatRate } from '../core/money.js';
import { ratesInto } from '../core/fx-table.js';
import type { Manifest } from '../core/manifest/types.js';
import type { PaymentRails } from './rails.js';

/** How deep a paid call's delegation may go: as deep as the agent declares calls (a mandate's default depth), else none. */
const DELEGATION_DEPTH = 1;

export function paymentMandate(rails: PaymentRails, terms: { payer: string; name: string; manifest: Manifest; budget: bigint; expiresAt: number }): Mandate {
  const issuer = `x402:${terms.payer}`;
  const fx = Object.fromEntries(Object.entries(ratesInto(rails.asset.currency, rails.fx)).map(([c, r]) => [c, formatRate(r)]));
  const doc = {
    id: `${issuer}/${terms.name}`,
    issuer,
    grantee: `${issuer}/caller`,
    allow: { agents: [terms.manifest.id], capabilities: [], published: true },
    budget: { total: formatAmount(terms.budget), currency: rails.asset.currency, fx },
    delegation: { max_depth: terms.manifest.calls.length > 0 ? DELEGATION_DEPTH : 0 },
    expires_at: new Date(terms.expiresAt).toISOString(),
  };
  const v = validateMandate(doc);
  if (!v.ok) throw new Error(`a payment's mandate does not validate: ${v.problems.map((p) => p.message).join('; ')}`);
  return v.mandate;
}
