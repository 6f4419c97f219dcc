/**
 * Resolution with the database's facts (gateway.md §1.1): an id names a listed version; a capability ranks its
 * implementers by their Agent Record (shared/core/resolution.ts is the pure rule). Also the facts admission needs:
 * whether a version was used under a mandate's tree before, and the agent's record.
 */
import type { AgentFacts } from '../../core/mandate/types.js';
import type { Manifest } from '../../core/manifest/types.js';
import { rankCapability, rankingRecord, type Candidate } from '../../core/resolution.js';
import { EMPTY_RECORD, loadRecords, recordKey } from '../../catalogue/agent-record.js';
import type { ServiceContext } from '../../context.js';
import type { KnownMandate } from '../../mandates/store.js';
import type { AgentVersion } from '../../registry/agent-version.js';
import { standingOf, type Standing } from '../../evaluation/standing.js';
import { latestEvaluations } from '../../evaluation/store.js';
import { label, type CallSubmission, type Refusal } from './types.js';

export type Resolution = { ok: true; agent: AgentVersion } | { ok: false; refusal: Refusal };

export async function resolveAgent(ctx: ServiceContext, stored: KnownMandate, sub: CallSubmission): Promise<Resolution> {
  if (sub.agent !== undefined) {
    const r = ctx.registry.resolve(sub.agent);
    if (r.ok) return r;
    return { ok: false, refusal: { code: r.code, status: 'denied', reasons: [r.message] } };
  }
  const capability = sub.capability!;
  const versions = ctx.registry.implementers(capability);
  if (versions.length === 0) {
    return { ok: false, refusal: { code: 'unknown_capability', status: 'denied', reasons: [`no listed agent implements ${capability}`] } };
  }
  const records = await loadRecords(
    ctx.db,
    versions.map((v) => ({ id: v.manifest.id, version: v.manifest.version })),
    ctx.settings.payerRule,
  );
  const standings = stored.mandate.require.evaluated ? await standingsOf(ctx, versions) : undefined;
  const candidates: Candidate[] = [];
  for (const v of versions) {
    const record = records.get(recordKey(v.manifest.id, v.manifest.version)) ?? EMPTY_RECORD;
    candidates.push({
      manifest: v.manifest,
      facts: { origin: v.origin, evaluation: standings?.get(keyOf(v)) ?? 'none', record },
      record: rankingRecord(record, ctx.settings.rankingMinPayers),
      usedBefore: await usedBefore(ctx, stored.mandate.id, v.manifest, stored.mandate.approval.firstUse),
    });
  }
  const ranking = rankCapability(capability, candidates, stored.mandate, {
    ...(sub.maxCost !== undefined ? { maxCost: sub.maxCost } : {}),
    depth: stored.mandate.depth,
    delegated: sub.delegation !== undefined,
    usedBefore: false,
    now: ctx.now(),
    ...(sub.delegation ? { slotMaxCost: sub.delegation.slotMaxCost } : {}),
  });
  const best = ranking.ranked[0];
  if (!best) {
    const reasons = ranking.denied.flatMap((d) => d.reasons.map((r) => `${label(d.manifest)}: ${r}`));
    return { ok: false, refusal: { code: 'denied', status: 'denied', reasons } };
  }
  return { ok: true, agent: versions.find((v) => v.manifest === best.manifest)! };
}

/**
 * `approval.first_use`: was this agent version called before under the mandate — counting the whole tree of a
 * root mandate (a sub-mandate is `<root>.<receipt>`; every run derives a new one, so its own history is empty).
 */
export async function usedBefore(ctx: ServiceContext, mandateId: string, manifest: Manifest, needed: boolean): Promise<boolean> {
  if (!needed) return true;
  const root = mandateId.split('.')[0]!;
  const row = await ctx
    .db('calls')
    .where({ agent_id: manifest.id, agent_version: manifest.version })
    .where((q) => q.where({ mandate_id: root }).orWhere('mandate_id', 'like', `${root.replace(/[\\%_]/g, '\\$&')}.%`))
    .first('id');
  return row !== undefined;
}

/**
 * The facts the mandate's `require` reads: the measured record (when `min_success_rate` asks), the evaluation
 * standing (when `evaluated` asks; shipped agents are not evaluated: `none`).
 */
export async function factsOf(ctx: ServiceContext, agent: AgentVersion, needs: { record: boolean; evaluation: boolean }): Promise<AgentFacts> {
  const facts: AgentFacts = { origin: agent.origin, evaluation: needs.evaluation ? await standingsOf(ctx, [agent]).then((m) => m.get(keyOf(agent))!) : 'none' };
  const withRecord = needs.record;
  if (withRecord) {
    const records = await loadRecords(ctx.db, [{ id: agent.manifest.id, version: agent.manifest.version }], ctx.settings.payerRule);
    const r = records.get(recordKey(agent.manifest.id, agent.manifest.version)) ?? EMPTY_RECORD;
    facts.record = { runs: r.runs, successes: r.successes };
  }
  return facts;
}

const keyOf = (v: AgentVersion) => `${v.manifest.id}@${v.manifest.version}`;

/** The evaluation standing of each version (published ones read theirs; shipped ones are `none`). */
async function standingsOf(ctx: ServiceContext, versions: readonly AgentVersion[]): Promise<Map<string, Standing>> {
  const published = versions.filter((v) => v.origin === 'published').map((v) => ({ id: v.manifest.id, version: v.manifest.version }));
  const latest = await latestEvaluations(ctx.db, published, false);
  return new Map(versions.map((v) => [keyOf(v), v.origin === 'published' ? standingOf(latest.get(keyOf(v))) : 'none']));
}
