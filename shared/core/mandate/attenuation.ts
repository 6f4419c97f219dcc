/**
 * Attenuation (spec/mandate.md §5): every way a child mandate would widen its parent. Empty = fine.
 *
 * Decisions where the spec is silent:
 * - "Inherited unchanged" is strict: `require`, `approval`, `budget.fx` and `budget.currency` must be
 *   equal to the parent's (rates compared by value), even a tightening is reported as a change.
 * - `deny` may grow but must keep every parent pattern, written the same.
 * - The child must name its parent (`parent` = parent id, id `<parent id>.<…>`), be one level deeper,
 *   have a strictly smaller `delegation.max_depth`, and be issued by the parent's grantee.
 * - `budget.per_call`: when the parent has one, the child must have one at most as high.
 * - A child of a revoked parent must be revoked too.
 */
import { compareRates, formatAmount, type Rate } from '../money.js';
import type { Retention } from '../manifest/types.js';
import type { Mandate } from './types.js';
import { coveringPattern } from './patterns.js';

export function checkAttenuation(parent: Mandate, child: Mandate): string[] {
  const out: string[] = [];
  const cur = parent.budget.currency;

  if (child.issuer !== parent.grantee) out.push(`issuer ${child.issuer} is not the parent's grantee ${parent.grantee}`);
  if (child.parent !== parent.id || !child.id.startsWith(`${parent.id}.`)) {
    out.push(`mandate ${child.id} does not name ${parent.id} as its parent`);
  }

  for (const p of child.allow.capabilities) {
    if (!coveringPattern(parent.allow.capabilities, p)) out.push(`allow.capabilities ${p} is not covered by the parent's allow.capabilities`);
  }
  for (const p of child.allow.agents) {
    if (!coveringPattern(parent.allow.agents, p)) out.push(`allow.agents ${p} is not covered by the parent's allow.agents`);
  }
  if (child.allow.published && !parent.allow.published) out.push('allow.published is turned on while the parent has it off');

  for (const p of parent.deny.capabilities) {
    if (!child.deny.capabilities.includes(p)) out.push(`deny.capabilities ${p} of the parent is dropped`);
  }
  for (const p of parent.deny.agents) {
    if (!child.deny.agents.includes(p)) out.push(`deny.agents ${p} of the parent is dropped`);
  }

  if (!sameRequire(parent.require, child.require)) out.push("require differs from the parent's");
  if (!sameApproval(parent.approval, child.approval)) out.push("approval differs from the parent's");
  if (!sameFx(parent.budget.fx, child.budget.fx)) out.push("budget.fx differs from the parent's");
  if (child.budget.currency !== cur) out.push(`budget.currency ${child.budget.currency} is not the parent's ${cur}`);

  if (child.budget.total > parent.budget.total) {
    out.push(`budget.total ${formatAmount(child.budget.total)} ${cur} is above the parent's ${formatAmount(parent.budget.total)} ${cur}`);
  }
  const pp = parent.budget.perCall;
  const cp = child.budget.perCall;
  if (pp !== undefined && (cp === undefined || cp > pp)) {
    out.push(`budget.per_call ${cp === undefined ? 'none' : formatAmount(cp)} is above the parent's ${formatAmount(pp)} ${cur}`);
  }

  if (child.depth !== parent.depth + 1) out.push(`depth ${child.depth} is not one below the parent's ${parent.depth}`);
  if (child.delegation.maxDepth >= parent.delegation.maxDepth) {
    out.push(`delegation.max_depth ${child.delegation.maxDepth} is not below the parent's ${parent.delegation.maxDepth}`);
  }

  if (parent.expiresAt !== undefined && (child.expiresAt === undefined || child.expiresAt > parent.expiresAt)) {
    const when = child.expiresAt === undefined ? 'never' : new Date(child.expiresAt).toISOString();
    out.push(`expires ${when}, later than the parent's ${new Date(parent.expiresAt).toISOString()}`);
  }
  if (parent.revoked && !child.revoked) out.push('the parent is revoked and the child is not');
  return out;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function sameRate(a: Rate | undefined, b: Rate | undefined): boolean {
  return a === undefined || b === undefined ? a === b : compareRates(a, b) === 0;
}

function sameRequire(a: Mandate['require'], b: Mandate['require']): boolean {
  const lic = Array.isArray(a.license) && Array.isArray(b.license) ? sameList(a.license, b.license) : a.license === b.license;
  const da = a.data;
  const db = b.data;
  const data =
    da === undefined || db === undefined
      ? da === db
      : sameRetention(da.retention, db.retention) &&
        (da.region === undefined || db.region === undefined ? da.region === db.region : sameList(da.region, db.region)) &&
        da.training === db.training;
  return lic && data && a.evaluated === b.evaluated && sameRate(a.minSuccessRate, b.minSuccessRate);
}

function sameRetention(a: Retention | undefined, b: Retention | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.kind === b.kind && (a.kind === 'none' || (b.kind === 'days' && a.days === b.days));
}

function sameApproval(a: Mandate['approval'], b: Mandate['approval']): boolean {
  return a.above === b.above && sameList(a.agents, b.agents) && a.firstUse === b.firstUse;
}

function sameFx(a: Record<string, Rate>, b: Record<string, Rate>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return sameList(ka, kb) && ka.every((k) => sameRate(a[k], b[k]));
}
