/**
 * Resolution (gateway.md §1.1): `ns/name[@range]` → a listed version; `capability` → ranked implementers.
 * Pure: the caller loads versions, manifests, facts and records.
 *
 * Versions: the highest listed version satisfying the range, with semver's default pre-release rule
 * (a pre-release only matches a range that names a pre-release of the same major.minor.patch). No range
 * means `*`: the highest release; when only pre-releases are listed the result is null (no fallback).
 * Strings that are not canonical semver versions are ignored.
 *
 * Ranking by cost per successful run, in the mandate's currency, exact in bigint and rounded up:
 *   average billed per run = record.billed / runs, or — the prior, when there are no runs — the agent's own
 *   worst case after max_cost (what one run can cost at most). A measured average is capped at that same
 *   own worst case: under this call's max_cost no run can be billed more.
 *   smoothed success rate = (successes + 1) / (runs + 2)  (Laplace: a version with no runs counts as 50%)
 *   costPerSuccess = ceil(average / smoothed rate)
 * The record is the one ranking reads (`rankingRecord`): the measured one once its runs were paid for by at least
 * `HOLON_RANKING_MIN_PAYERS` distinct accounts; before that none, so the version ranks on the prior (its worst
 * case, 50 %), as a new one does. Runs an agent's author paid for are never in a record (agent-record.ts).
 * Ties: worst case ascending, then id ascending, then version descending. Candidates whose admission is
 * `approve` are ranked (the caller asks the human); `deny`, and a worst case above the slot's max_cost,
 * go to `denied` with every reason.
 */
import semver from 'semver';
import { divRound, type Micros } from './money.js';
import type { Manifest } from './manifest/types.js';
import type { Admission, AgentFacts, CallRequest, Mandate } from './mandate/types.js';
import { checkCall } from './mandate/check-call.js';
import { worstCase } from './pricing.js';

export { parseAgentRef } from './identifiers.js';

/** The highest listed version satisfying `range` (default `*`), or null. */
export function resolveVersion(versions: readonly string[], range?: string): string | null {
  const valid = versions.filter((v) => semver.valid(v) === v);
  return semver.maxSatisfying(valid, range ?? '*');
}

export interface Candidate {
  manifest: Manifest;
  facts: AgentFacts;
  /** Measured record; `billed` is the total billed over those runs, in the mandate's currency. */
  record: { runs: number; successes: number; billed: Micros };
  /** Whether this exact version was used under the mandate before; defaults to the request's. */
  usedBefore?: boolean;
}

/** The call as checkCall sees it, less what each candidate supplies (its worst case, its facts). */
export type RankRequest = Omit<CallRequest, 'worstCase' | 'via' | 'facts'>;

interface Ranked {
  manifest: Manifest;
  costPerSuccess: Micros;
  worstCase: Micros;
  admission: Admission;
}

export interface Ranking {
  ranked: Ranked[];
  denied: Array<{ manifest: Manifest; reasons: string[] }>;
}

/** A measured record as its loader gives it: runs, successes, billed, and how many distinct accounts paid for them. */
export interface PaidRecord {
  runs: number;
  successes: number;
  billed: Micros;
  payers: number;
}

const NO_RECORD: Candidate['record'] = { runs: 0, successes: 0, billed: 0n };

/**
 * What ranking reads of a measured record: the record, once its runs came from at least `minPayers` distinct payers;
 * else no record (the prior), whatever its runs say. One payer's calls, however many, never move a ranking.
 */
export function rankingRecord(record: PaidRecord, minPayers: number): Candidate['record'] {
  return record.payers >= minPayers ? { runs: record.runs, successes: record.successes, billed: record.billed } : NO_RECORD;
}

/** ceil(average billed per run / smoothed success rate); see the header. */
export function costPerSuccess(record: Candidate['record'], ownWorstCase: Micros): Micros {
  const { runs, successes, billed } = record;
  if (!Number.isSafeInteger(runs) || !Number.isSafeInteger(successes) || runs < 0 || successes < 0 || successes > runs || billed < 0n) {
    throw new RangeError(`invalid record: ${successes} successes, ${runs} runs, ${billed} billed`);
  }
  const n = BigInt(runs);
  let avgNum = runs > 0 ? billed : ownWorstCase;
  const avgDen = runs > 0 ? n : 1n;
  if (avgNum > ownWorstCase * avgDen) avgNum = ownWorstCase * avgDen;
  return divRound(avgNum * (n + 2n), (BigInt(successes) + 1n) * avgDen, 'up');
}

export function rankCapability(capability: string, candidates: readonly Candidate[], mandate: Mandate, request: RankRequest): Ranking {
  const ranked: Ranked[] = [];
  const denied: Ranking['denied'] = [];
  for (const c of candidates) {
    if (!c.manifest.capabilities.includes(capability)) continue;
    const wc = worstCase(c.manifest, mandate.budget, request.maxCost);
    const admission = checkCall(mandate, c.manifest, {
      ...request,
      usedBefore: c.usedBefore ?? request.usedBefore,
      worstCase: wc.ok ? wc.total : null,
      via: { kind: 'capability', capability },
      facts: c.facts,
    });
    const reasons = admission.decision === 'deny' ? [...admission.reasons] : [];
    if (!wc.ok && reasons.length === 0) reasons.push(wc.message);
    if (!wc.ok || reasons.length > 0) {
      denied.push({ manifest: c.manifest, reasons });
      continue;
    }
    const cost = costPerSuccess(c.record, wc.own);
    ranked.push({ manifest: c.manifest, costPerSuccess: cost, worstCase: wc.total, admission });
  }
  ranked.sort(compareRanked);
  return { ranked, denied };
}

function compareRanked(a: Ranked, b: Ranked): number {
  if (a.costPerSuccess !== b.costPerSuccess) return a.costPerSuccess < b.costPerSuccess ? -1 : 1;
  if (a.worstCase !== b.worstCase) return a.worstCase < b.worstCase ? -1 : 1;
  if (a.manifest.id !== b.manifest.id) return a.manifest.id < b.manifest.id ? -1 : 1;
  const va = a.manifest.version;
  const vb = b.manifest.version;
  if (semver.valid(va) && semver.valid(vb)) return semver.rcompare(va, vb);
  return va < vb ? 1 : va > vb ? -1 : 0;
}
