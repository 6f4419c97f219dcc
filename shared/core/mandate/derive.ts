/**
 * Deriving the sub-mandate of a run (spec/mandate.md §5, gateway.md §3). Pure.
 *
 * Decisions where the spec is silent:
 * - A declared `calls` entry the parent's `allow` does not cover is dropped; when none is left the
 *   sub-mandate is still derived, with an empty `allow` (every downstream call is then denied).
 * - `budget.total` is `opts.budgetTotal` clamped to the parent's total; `budget.per_call` is the
 *   parent's, clamped to the new total (absent when the parent has none).
 * - Refused: no declared calls, `delegation.max_depth` 0, a negative budget, a malformed receipt id.
 * - A revoked parent gives a revoked child (a run should never start under one anyway).
 * The gateway still runs `checkAttenuation(parent, child)` before use.
 */
import { minAmount, type Micros } from '../money.js';
import type { Manifest } from '../manifest/types.js';
import type { DataRequirement, Mandate } from './types.js';
import { coveringPattern } from './patterns.js';
import { RECEIPT_ID } from './validate.js';

export type Derivation = { ok: true; mandate: Mandate } | { ok: false; reason: string };

export function deriveSubMandate(parent: Mandate, manifest: Manifest, opts: { receiptId: string; budgetTotal: Micros }): Derivation {
  if (manifest.calls.length === 0) return { ok: false, reason: `agent ${manifest.id} declares no calls: no sub-mandate` };
  if (parent.delegation.maxDepth <= 0) {
    return { ok: false, reason: `mandate ${parent.id} has delegation.max_depth 0: its agents cannot delegate` };
  }
  if (opts.budgetTotal < 0n) return { ok: false, reason: 'a sub-mandate budget cannot be negative' };
  if (!RECEIPT_ID.test(opts.receiptId)) return { ok: false, reason: `"${opts.receiptId}" is not a receipt id` };

  const capabilities: string[] = [];
  const agents: string[] = [];
  for (const slot of manifest.calls) {
    if (slot.capability !== undefined && coveringPattern(parent.allow.capabilities, slot.capability)) {
      if (!capabilities.includes(slot.capability)) capabilities.push(slot.capability);
    }
    if (slot.agent !== undefined && coveringPattern(parent.allow.agents, slot.agent)) {
      if (!agents.includes(slot.agent)) agents.push(slot.agent);
    }
  }

  const total = minAmount(opts.budgetTotal, parent.budget.total);
  const { perCall } = parent.budget;
  const { data, license, minSuccessRate } = parent.require;
  const mandate: Mandate = {
    id: `${parent.id}.${opts.receiptId}`,
    issuer: parent.grantee,
    grantee: manifest.id,
    allow: { capabilities, agents, published: parent.allow.published },
    deny: { capabilities: [...parent.deny.capabilities], agents: [...parent.deny.agents] },
    require: {
      license: Array.isArray(license) ? [...license] : license,
      ...(data ? { data: copyData(data) } : {}),
      evaluated: parent.require.evaluated,
      ...(minSuccessRate ? { minSuccessRate: { ...minSuccessRate } } : {}),
    },
    approval: { ...parent.approval, agents: [...parent.approval.agents] },
    budget: {
      total,
      currency: parent.budget.currency,
      ...(perCall !== undefined ? { perCall: minAmount(perCall, total) } : {}),
      fx: Object.fromEntries(Object.entries(parent.budget.fx).map(([c, r]) => [c, { ...r }])),
    },
    delegation: { maxDepth: parent.delegation.maxDepth - 1 },
    ...(parent.expiresAt !== undefined ? { expiresAt: parent.expiresAt } : {}),
    revoked: parent.revoked,
    depth: parent.depth + 1,
    parent: parent.id,
  };
  return { ok: true, mandate };
}

function copyData(d: DataRequirement): DataRequirement {
  return {
    ...d,
    ...(d.retention ? { retention: { ...d.retention } } : {}),
    ...(d.region ? { region: [...d.region] } : {}),
  };
}
