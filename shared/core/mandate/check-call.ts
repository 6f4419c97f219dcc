/**
 * Admission (spec/mandate.md §3): may this call happen under this mandate? Pure — `now` comes in the
 * request. Every deny reason is collected, in the order of the spec's rules; approve rules apply only
 * when nothing denies; inside a delegated run an approve becomes a deny.
 *
 * Decisions where the spec is silent:
 * - A mandate expires AT `expires_at`: a call with `now >= expiresAt` is denied.
 * - `deny.capabilities` is checked against the requested class AND every class the agent declares
 *   (deny beats allow, whichever way the agent was named).
 * - An agent that costs nothing (own worst case 0 and no passthrough cap) needs no fx rate; its
 *   worst case counts as 0 even when the pricing module could not convert it.
 * - A worst case that is null for any other reason than a missing fx rate or a per_run price above
 *   max_cost is still a deny (fail closed: no call is admitted without a known worst case).
 * - `require.license` lists and `require.data.region` compare case-insensitively.
 */
import { costsNothing, fxRateFor } from '../pricing.js';
import { convert, formatAmount, type Micros, type Rate } from '../money.js';
import { isOpenSource, type Manifest, type Retention } from '../manifest/types.js';
import type { Admission, CallRequest, Mandate } from './types.js';
import { matchesAgent, matchesCapability } from './patterns.js';

/** Runs counted before `require.min_success_rate` applies. */
const MIN_RUNS_FOR_SUCCESS_RATE = 20;

/** One admission check: the call asked for, and how its messages name the agent and amounts. */
interface Check {
  mandate: Mandate;
  manifest: Manifest;
  request: CallRequest;
  /** `id@version`. */
  agent: string;
  /** An amount in the mandate's currency. */
  money(m: Micros): string;
}

export function checkCall(mandate: Mandate, manifest: Manifest, request: CallRequest): Admission {
  const c: Check = { mandate, manifest, request, agent: `${manifest.id}@${manifest.version}`, money: (m) => `${formatAmount(m)} ${mandate.budget.currency}` };
  const free = costsNothing(manifest);
  const fx = fxRateFor(manifest.pricing.currency, mandate.budget);
  const noRate = fx === null && !free;
  const worst = request.worstCase ?? (free ? 0n : null);
  const overPrice = priceReasons(c, fx);
  const deny = [
    ...lifetimeReasons(c),
    ...allowReasons(c),
    ...denyPatternReasons(c),
    ...requireReasons(c),
    ...(noRate ? [noRateReason(c)] : []),
    ...overPrice,
    ...budgetReasons(c, worst, !noRate && overPrice.length === 0),
    ...depthReasons(c),
  ];
  if (deny.length) return { decision: 'deny', reasons: deny };
  return approval(c, worst!);
}

/** 1. expired or revoked */
function lifetimeReasons({ mandate, request }: Check): string[] {
  const out: string[] = [];
  if (mandate.revoked) out.push(`mandate ${mandate.id} has been revoked`);
  if (mandate.expiresAt !== undefined && request.now >= mandate.expiresAt) {
    out.push(`mandate ${mandate.id} expired at ${new Date(mandate.expiresAt).toISOString()}`);
  }
  return out;
}

/** 2. allowed: by id, an allow.agents pattern; by capability, the agent implements it, allow.capabilities and allow.published. */
function allowReasons({ mandate, manifest, request, agent }: Check): string[] {
  const out: string[] = [];
  if (request.via.kind === 'id') {
    if (!mandate.allow.agents.some((p) => matchesAgent(p, manifest.id, manifest.version))) {
      out.push(`agent ${agent} is not allowed: no allow.agents pattern matches it`);
    }
    return out;
  }
  const cls = request.via.capability;
  if (!manifest.capabilities.includes(cls)) out.push(`agent ${agent} does not implement capability ${cls}`);
  if (!mandate.allow.capabilities.some((p) => matchesCapability(p, cls))) {
    out.push(`capability ${cls} is not allowed: no allow.capabilities pattern matches it`);
  }
  if (request.facts.origin === 'published' && !mandate.allow.published) {
    out.push(`agent ${agent} is published by a third party and the mandate does not set allow.published`);
  }
  return out;
}

/** 3. deny patterns: deny.agents, and deny.capabilities against the requested class and every class the agent declares. */
function denyPatternReasons({ mandate, manifest, request, agent }: Check): string[] {
  const out: string[] = [];
  for (const p of mandate.deny.agents) {
    if (matchesAgent(p, manifest.id, manifest.version)) out.push(`agent ${agent} is denied by deny.agents pattern ${p}`);
  }
  const classes = new Set(manifest.capabilities);
  if (request.via.kind === 'capability') classes.add(request.via.capability);
  for (const p of mandate.deny.capabilities) {
    const hit = [...classes].filter((c) => matchesCapability(p, c));
    if (hit.length) out.push(`capability ${hit.join(', ')} of agent ${agent} is denied by deny.capabilities pattern ${p}`);
  }
  return out;
}

/** 5. currency: an agent that costs something needs an fx rate into the mandate's currency. */
function noRateReason({ mandate, manifest, agent }: Check): string {
  const from = manifest.pricing.currency;
  return `agent ${agent} is priced in ${from} and the mandate has no fx rate from ${from} into ${mandate.budget.currency}`;
}

/** 6. per_run price above max_cost (a per_run price is never lowered). */
function priceReasons({ manifest, request, agent, money }: Check, fx: Rate | null): string[] {
  const { pricing } = manifest;
  if (pricing.model !== 'per_run' || pricing.amount === undefined || request.maxCost === undefined || fx === null) return [];
  const price = convert(pricing.amount, fx);
  if (price <= request.maxCost) return [];
  return [`agent ${agent} costs ${money(price)} per run, above the max_cost ${money(request.maxCost)}; a per_run price is never lowered`];
}

/**
 * 7. worst case within per_call, total and the delegation slot's max_cost. An unknown worst case is a deny of its own
 * (fail closed) unless rules 5 or 6 already said why (`unexplained`).
 */
function budgetReasons({ mandate, request, agent, money }: Check, worst: Micros | null, unexplained: boolean): string[] {
  if (worst === null) return unexplained ? [`the worst case of a call to ${agent} could not be determined in ${mandate.budget.currency}`] : [];
  const out: string[] = [];
  const { perCall, total } = mandate.budget;
  if (perCall !== undefined && worst > perCall) out.push(`the worst case ${money(worst)} is above budget.per_call ${money(perCall)}`);
  if (worst > total) out.push(`the worst case ${money(worst)} is above budget.total ${money(total)}`);
  // A child call must fit the slot its orchestrator declared, however it was named.
  if (request.slotMaxCost !== undefined && worst > request.slotMaxCost) {
    out.push(`the worst case ${money(worst)} is above the slot's max_cost ${money(request.slotMaxCost)} (the declared call's cap)`);
  }
  return out;
}

/** 8. depth: within the mandate's depth and delegation.max_depth. */
function depthReasons({ mandate, request }: Check): string[] {
  const deepest = mandate.depth + mandate.delegation.maxDepth;
  if (request.depth > deepest) {
    return [
      `call depth ${request.depth} is deeper than the mandate allows (at most ${deepest}: depth ${mandate.depth}, delegation.max_depth ${mandate.delegation.maxDepth})`,
    ];
  }
  if (request.depth < mandate.depth) return [`call depth ${request.depth} is shallower than this sub-mandate's own depth ${mandate.depth}`];
  return [];
}

/** Nothing denies: allowed, unless an approval rule applies (then approve; inside a delegated run, deny). */
function approval({ mandate, manifest, request, agent, money }: Check, worst: Micros): Admission {
  const approve: string[] = [];
  const { above, agents, firstUse } = mandate.approval;
  if (above !== undefined && worst > above) approve.push(`the worst case ${money(worst)} is above approval.above ${money(above)}`);
  for (const p of agents) {
    if (matchesAgent(p, manifest.id, manifest.version)) approve.push(`calls to agent ${agent} need approval (approval.agents pattern ${p})`);
  }
  if (firstUse && !request.usedBefore) approve.push(`first call of agent ${agent} under this mandate needs approval (approval.first_use)`);

  if (!approve.length) return { decision: 'allow', reasons: [] };
  if (request.delegated) {
    return { decision: 'deny', reasons: [...approve, 'nobody can approve inside a delegated run, so the call is denied'] };
  }
  return { decision: 'approve', reasons: approve };
}

/** 4. require: license, data policy, evaluation, measured success rate. */
function requireReasons({ mandate, manifest, request, agent }: Check): string[] {
  const out: string[] = [];
  const { license, data, evaluated, minSuccessRate } = mandate.require;

  if (license === 'open-source' && !isOpenSource(manifest)) {
    out.push(`agent ${agent} is proprietary and the mandate requires open source`);
  } else if (Array.isArray(license) && !license.some((l) => l.toLowerCase() === manifest.license.toLowerCase())) {
    out.push(`agent ${agent} is licensed ${manifest.license}, not one of ${license.join(', ')}`);
  }

  if (data) out.push(...dataReasons(data, manifest.data ?? {}, agent));

  if (evaluated && request.facts.evaluation !== 'passed' && request.facts.evaluation !== 'none') {
    out.push(`agent ${agent} has not passed its evaluation (${request.facts.evaluation}) and the mandate requires evaluated versions`);
  }

  const record = request.facts.record;
  if (minSuccessRate && record && !(isCount(record.runs) && isCount(record.successes) && record.successes <= record.runs)) {
    out.push(`agent ${agent} has an unusable measured record (${record.successes} of ${record.runs} runs)`); // fail closed
  } else if (minSuccessRate && record && record.runs >= MIN_RUNS_FOR_SUCCESS_RATE && !rateAtLeast(record, minSuccessRate)) {
    out.push(`agent ${agent} succeeded in ${record.successes} of ${record.runs} runs, below the required success rate ${describeRate(minSuccessRate)}`);
  }
  return out;
}

type DataPolicy = NonNullable<Manifest['data']>;

/** require.data against the data policy the agent declares: retention, region, training. */
function dataReasons(data: NonNullable<Mandate['require']['data']>, declared: DataPolicy, agent: string): string[] {
  const out: string[] = [];
  if (data.retention && !retentionFits(declared.retention, data.retention)) {
    out.push(`agent ${agent} declares ${describeRetention(declared.retention)}; the mandate requires ${describeRetention(data.retention)}`);
  }
  if (data.region) {
    const allowed = new Set(data.region.map((r) => r.toLowerCase()));
    const regions = declared.region ?? [];
    if (regions.length === 0 || !regions.every((r) => allowed.has(r.toLowerCase()))) {
      out.push(`agent ${agent} declares regions ${regions.length ? regions.join(', ') : 'none'}; the mandate requires only ${data.region.join(', ')}`);
    }
  }
  if (data.training === false && declared.training !== false) {
    out.push(`agent ${agent} does not declare training: false; the mandate requires that inputs are not used for training`);
  }
  return out;
}

function retentionFits(declared: Retention | undefined, required: Retention): boolean {
  if (!declared) return false;
  if (declared.kind === 'none') return true;
  return required.kind === 'days' && declared.days <= required.days;
}

function describeRetention(r: Retention | undefined): string {
  if (!r) return 'no retention';
  return r.kind === 'none' ? 'retention none' : `retention ${r.days} days`;
}

function isCount(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

/** successes / runs ≥ num / den, exactly. */
function rateAtLeast(record: { runs: number; successes: number }, min: Rate): boolean {
  return BigInt(record.successes) * min.den >= min.num * BigInt(record.runs);
}

function describeRate(r: Rate): string {
  const pct = (r.num * 1_000_000n) / r.den; // in 1/10_000 of a percent
  const whole = pct / 10_000n;
  const frac = (pct % 10_000n).toString().padStart(4, '0').replace(/0+$/, '');
  return `${whole}${frac ? `.${frac}` : ''}%`;
}
