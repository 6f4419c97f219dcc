/**
 * The catalogue, as callers see it (GET /v0/agents and the MCP tools search_agents / get_agent):
 *
 * searchCatalogue({q?, capability?, mandate?}) — ranked. With a mandate: worst cases and the list price in its
 *   currency, and the agents it does not allow listed apart with the reasons. Each result carries the compact
 *   all-time record of the version shown (`record`), all results measured with ONE query.
 *   `q`: full-text search (text-search.ts), ANY of its words, stemmed, over id, name, summary, description,
 *   capabilities and examples. The candidates are what the registry lists for the other filters (capability,
 *   listed, not yanked, not HOLON_EXCLUDEd), exactly as without `q`; the words (matched on the documents'
 *   index, search-documents.ts) only keep those that match and order them: the agent whose id is the query first, then by relevance, then by cost per successful run (the ranking
 *   fact of resolution.ts: in the mandate's currency under a mandate; without one, in the agent's own currency,
 *   agents priced in different currencies ordered by currency code, since there is no rate to compare them), then
 *   by id. A capability search under a mandate keeps its cost ranking among equally relevant agents. Without `q`,
 *   the order is what it was (by id; by cost for a capability under a mandate).
 * describeAgent(ref) — one agent: the resolved version's manifest, its Agent Record, and every listed version
 *   with its own record (ONE query for the whole view). With HOLON_RECORDS, and only while the agent has no
 *   measured run at all, `sample`: the operator's sample record, labelled `source: "sample"`, beside the
 *   measured fields (sample-records.ts). Search never shows samples: it ranks and admits, on measurements only.
 *
 * The Agent Record (agent-record.ts: definitions, percentiles, currency) is what Holon measured, from `call_events`:
 *   record   compact, all time, the version shown: {runs, successes, success_rate, latency_p50_ms,
 *            cost_per_successful_run, currency}. Measured: cost per successful run is total billed ÷ successes
 *            (null without successes), not the ranking estimate (that one is the top-level
 *            `cost_per_successful_run` of a capability search under a mandate, in the mandate's currency).
 *   records  one-agent view only: {version: {last_30_days, all_time}, agent: {last_30_days, all_time}}, each
 *            window {runs, successes, success_rate, latency_ms: {p50, p95}, currency, billed_total,
 *            cost_per_successful_run, errors: {code: count}[, by_currency]}.
 * What the author declared is shown as declared, never as measured (gateway.md §6, manifest.md §6):
 *   data     {attested: true, retention, region, training, subprocessors, note}; a field the manifest does not
 *            declare is null.
 *   runtime  {kind, attested}: `mcp` and `webhook` run on the author's server (attested: true, with a note);
 *            `node` runs in the gateway's own runtime (attested: false).
 *   evaluation  {status, suites} (evaluations.ts): the standing `require.evaluated` reads, and each suite's latest
 *            run; the one-agent view adds each case (public detail, hidden pass/fail); shipped agents `none`.
 */
import { HolonError } from '../core/errors.js';
import type { Manifest } from '../core/manifest/types.js';
import type { Mandate } from '../core/mandate/types.js';
import { checkCall } from '../core/mandate/check-call.js';
import { convert, formatAmount } from '../core/money.js';
import { fxRateFor, ownWorstCase, worstCase, type MandateBudget } from '../core/pricing.js';
import { costPerSuccess, rankCapability, rankingRecord, type Candidate } from '../core/resolution.js';
import type { AgentVersion } from '../registry/agent-version.js';
import type { ServiceContext } from '../context.js';
import { loadMandate } from '../mandates/store.js';
import { sampleFor } from './sample-records.js';
import { byRelevance, MAX_QUERY_LENGTH, type TextMatch } from './text-search.js';
import { matchText } from './search-documents.js';
import { loadEvaluationSummaries, NOT_EVALUATED, publishedOf, type EvaluationSummary } from './evaluations.js';
import {
  EMPTY_RECORD,
  EMPTY_SUMMARY,
  loadAgentRecords,
  loadRecordSummaries,
  recordKey,
  summarize,
  type MeasuredRecord,
  type RecordSummary,
} from './agent-record.js';

function pricingView(m: Manifest) {
  const p = m.pricing;
  return {
    model: p.model,
    currency: p.currency,
    ...(p.amount !== undefined ? { amount: formatAmount(p.amount) } : {}),
    ...(p.unit ? { unit: p.unit } : {}),
    ...(p.max !== undefined ? { max: formatAmount(p.max) } : {}),
    charge_on: p.chargeOn,
  };
}

const DATA_POLICY_NOTE = 'declared by the author, not verified by Holon';
const REMOTE_RUNTIME_NOTE = "runs on the author's server: Holon cannot see what it does with the data";

/** The data policy as declared (manifest.md §6): attested, not enforced. Undeclared fields are null. */
function dataView(m: Manifest) {
  const d = m.data;
  const retention = d?.retention ? (d.retention.kind === 'none' ? 'none' : `${d.retention.days}d`) : null;
  return {
    attested: true as const,
    retention,
    region: d?.region ?? null,
    training: d?.training ?? null,
    subprocessors: d?.subprocessors ?? null,
    note: DATA_POLICY_NOTE,
  };
}

/** Remote runtimes are attested, not enforced (gateway.md §6). An A2A agent's: its skill and the card kept at publish. */
function runtimeView(a: AgentVersion) {
  const m = a.manifest;
  const kind = m.runtime.kind;
  if (kind === 'a2a') return { kind, attested: true as const, note: REMOTE_RUNTIME_NOTE, a2a: a2aView(m.runtime.skill ?? '', a.a2aCard) };
  return kind === 'mcp' || kind === 'webhook' ? { kind, attested: true as const, note: REMOTE_RUNTIME_NOTE } : { kind, attested: false as const };
}

const text = (v: unknown): string => (typeof v === 'string' ? v.slice(0, 500) : '');

/** What an A2A agent's card says of itself (the author's words, shown as text): its name, description and the skill offered. */
function a2aView(skill: string, card: unknown) {
  if (typeof card !== 'object' || card === null) return { skill, card: null };
  const c = card as { name?: unknown; description?: unknown; skills?: unknown };
  const offered = Array.isArray(c.skills) ? (c.skills as Array<Record<string, unknown>>).find((s) => s?.id === skill) : undefined;
  return {
    skill,
    card: { name: text(c.name), description: text(c.description), skill_name: text(offered?.name), skill_description: text(offered?.description) },
  };
}

export function agentView(a: AgentVersion, record: RecordSummary, evaluation: EvaluationSummary = NOT_EVALUATED) {
  const m = a.manifest;
  return {
    id: m.id,
    version: m.version,
    summary: m.summary,
    capabilities: m.capabilities,
    license: m.license,
    origin: a.origin,
    pricing: pricingView(m),
    record,
    data: dataView(m),
    runtime: runtimeView(a),
    evaluation,
  };
}

/** A list price in the mandate's currency (rounded up, like every conversion the caller pays); null without a rate. */
function priceIn(m: Manifest, budget: MandateBudget) {
  const rate = fxRateFor(m.pricing.currency, budget);
  if (!rate) return null;
  const p = m.pricing;
  return {
    model: p.model,
    currency: budget.currency,
    ...(p.amount !== undefined ? { amount: formatAmount(convert(p.amount, rate)) } : {}),
    ...(p.unit ? { unit: p.unit } : {}),
    ...(p.max !== undefined ? { max: formatAmount(convert(p.max, rate)) } : {}),
  };
}

export interface CatalogueQuery {
  q?: string;
  capability?: string;
  mandateId?: string;
}

/** Cheaper per successful run first; an unknown cost (no rate into the mandate's currency) last. */
function byCost(a: { currency: string; cost: bigint | null }, b: { currency: string; cost: bigint | null }): number {
  if (a.currency !== b.currency) return a.currency < b.currency ? -1 : 1;
  if (a.cost === b.cost) return 0;
  if (a.cost === null) return 1;
  if (b.cost === null) return -1;
  return a.cost < b.cost ? -1 : 1;
}

/** What search shows and ranks of each found agent: its measured record, the compact record shown, its evaluation. */
interface Facts {
  measured(a: AgentVersion): MeasuredRecord;
  /** What ranking reads of it (resolution.ts `rankingRecord`: none below HOLON_RANKING_MIN_PAYERS payers). */
  ranking(a: AgentVersion): Candidate['record'];
  shown(a: AgentVersion): RecordSummary;
  evaluated(a: AgentVersion): EvaluationSummary;
}

/** A search under a mandate: the agents found (and, with `q`, how they matched), and what admission reads. */
interface MandateSearch {
  mandate: Mandate;
  now: number;
  found: AgentVersion[];
  matches: ReadonlyMap<AgentVersion, TextMatch> | undefined;
  facts: Facts;
}

export async function searchCatalogue(gateway: ServiceContext, query: CatalogueQuery) {
  const { capability, mandateId } = query;
  const q = query.q?.trim() ? query.q : undefined;
  if (q !== undefined && q.length > MAX_QUERY_LENGTH)
    throw new HolonError('invalid_request', `q must be at most ${MAX_QUERY_LENGTH} characters`, [{ path: '$.q', message: 'too long' }]);
  const listed = gateway.registry.search(capability ? { capability } : {});
  const matches: ReadonlyMap<AgentVersion, TextMatch> | undefined = q === undefined ? undefined : await matchText(gateway.db, listed, q);
  const found = matches ? listed.filter((a) => matches.has(a)) : listed;
  const facts = await loadFacts(gateway, found);
  if (!mandateId) {
    const { shown, evaluated } = facts;
    return { agents: byOwnCost(found, matches, facts).map((a) => agentView(a, shown(a), evaluated(a))) };
  }

  const stored = await loadMandate(gateway.db, mandateId);
  if (!stored) throw new HolonError('not_found', `there is no mandate ${mandateId}`);
  const search: MandateSearch = { mandate: stored.mandate, now: gateway.now(), found, matches, facts };
  if (capability && !capability.endsWith('.*')) return rankedByCapability(search, capability);
  return admittedById(search);
}

/** One query for every result: the compact record shown, and the figures ranking needs; then their evaluations. */
async function loadFacts(gateway: ServiceContext, found: readonly AgentVersion[]): Promise<Facts> {
  const records = await loadRecordSummaries(
    gateway.db,
    found.map((a) => ({ id: a.manifest.id, version: a.manifest.version })),
    gateway.settings.payerRule,
  );
  const evaluations = await loadEvaluationSummaries(gateway.db, publishedOf(found), false);
  const measured = (a: AgentVersion) => records.get(recordKey(a.manifest.id, a.manifest.version))?.measured ?? EMPTY_RECORD;
  return {
    measured,
    ranking: (a) => rankingRecord(measured(a), gateway.settings.rankingMinPayers),
    shown: (a) => records.get(recordKey(a.manifest.id, a.manifest.version))?.summary ?? EMPTY_SUMMARY,
    evaluated: (a) => evaluations(a.manifest.id, a.manifest.version),
  };
}

/** Without a mandate: as found, or with `q` by relevance, then cost per successful run in the agent's own currency. */
function byOwnCost(found: AgentVersion[], matches: MandateSearch['matches'], { ranking }: Facts): AgentVersion[] {
  if (!matches) return found;
  const own = (a: AgentVersion) => ({ currency: a.manifest.pricing.currency, cost: costPerSuccess(ranking(a), ownWorstCase(a.manifest.pricing)) });
  return [...found].sort(
    byRelevance(
      matches,
      (a: AgentVersion) => a,
      (a, b) => byCost(own(a), own(b)),
    ),
  );
}

/** An agent as shown under a mandate: its view, and its list price in the mandate's currency. */
function viewUnderMandate({ mandate, facts }: MandateSearch, a: AgentVersion) {
  return { ...agentView(a, facts.shown(a), facts.evaluated(a)), price: priceIn(a.manifest, mandate.budget) };
}

/** A capability under a mandate: the capability ranking (resolution.ts), equally relevant agents kept in its order. */
function rankedByCapability(search: MandateSearch, capability: string) {
  const { mandate, now, found, matches, facts } = search;
  const ranking = rankCapability(
    capability,
    found.map((a) => ({
      manifest: a.manifest,
      facts: { origin: a.origin, evaluation: facts.evaluated(a).status, record: facts.measured(a) },
      record: facts.ranking(a),
      usedBefore: true,
    })),
    mandate,
    { depth: mandate.depth, delegated: false, usedBefore: true, now },
  );
  const byManifest = new Map(found.map((a) => [a.manifest, a]));
  const agentOf = (r: { manifest: Manifest }) => byManifest.get(r.manifest)!;
  // Equally relevant agents keep the capability ranking's order (cost per successful run, worst case, id).
  const ranked = matches ? [...ranking.ranked].sort(byRelevance(matches, agentOf)) : ranking.ranked;
  const denied = matches ? [...ranking.denied].sort(byRelevance(matches, agentOf)) : ranking.denied;
  return {
    currency: mandate.budget.currency,
    agents: ranked.map((r) => ({
      ...viewUnderMandate(search, agentOf(r)),
      worst_case: formatAmount(r.worstCase),
      cost_per_successful_run: formatAmount(r.costPerSuccess),
      decision: r.admission.decision,
    })),
    denied: denied.map((d) => ({ id: d.manifest.id, version: d.manifest.version, reasons: d.reasons })),
  };
}

/** Any other search under a mandate: each agent admitted as if called by id; the denied listed apart with the reasons. */
function admittedById(search: MandateSearch) {
  const { mandate, now, found, matches, facts } = search;
  const currency = mandate.budget.currency;
  const allowed = [];
  const denied = [];
  for (const a of found) {
    const wc = worstCase(a.manifest, mandate.budget);
    const admission = checkCall(mandate, a.manifest, {
      worstCase: wc.ok ? wc.total : null,
      depth: mandate.depth,
      delegated: false,
      via: { kind: 'id' },
      usedBefore: true,
      now,
      facts: { origin: a.origin, evaluation: facts.evaluated(a).status, record: facts.measured(a) },
    });
    if (admission.decision === 'deny') denied.push({ agent: a, view: { id: a.manifest.id, version: a.manifest.version, reasons: admission.reasons } });
    else
      allowed.push({
        agent: a,
        cost: wc.ok ? costPerSuccess(facts.ranking(a), wc.own) : null,
        view: { ...viewUnderMandate(search, a), worst_case: wc.ok ? formatAmount(wc.total) : null, decision: admission.decision },
      });
  }
  if (matches) {
    allowed.sort(
      byRelevance(
        matches,
        (x) => x.agent,
        (x, y) => byCost({ currency, cost: x.cost }, { currency, cost: y.cost }),
      ),
    );
    denied.sort(byRelevance(matches, (x) => x.agent));
  }
  return { currency, agents: allowed.map((x) => x.view), denied: denied.map((x) => x.view) };
}

/** An input to start from: the first example that succeeds (`output`), else the first example, else null. */
function exampleInput(m: Manifest): unknown {
  const examples = m.interface.examples;
  return (examples.find((e) => e.output !== undefined) ?? examples[0])?.input ?? null;
}

/**
 * One agent by `ns/name[@range]`; an invalid reference is a 400, an unknown one a 404. `interface` carries the
 * input and output schemas, the declared errors and the examples; `example_input` an input to start from (MCP
 * get_agent shows both, for call_agent's `input`).
 */
export async function describeAgent(gateway: ServiceContext, ref: string) {
  const resolved = gateway.registry.resolve(ref);
  if (!resolved.ok) throw new HolonError(resolved.code === 'invalid_ref' ? 'invalid_request' : 'not_found', resolved.message);
  const agent = resolved.agent;
  const versions = gateway.registry.versions(agent.manifest.id);
  const measuredRecords = await loadAgentRecords(
    gateway.db,
    agent.manifest.id,
    versions.map((v) => v.manifest.version),
    { now: gateway.now(), rule: gateway.settings.payerRule },
  );
  const own = measuredRecords.versions.get(agent.manifest.version)!;
  const evaluations = await loadEvaluationSummaries(gateway.db, publishedOf(versions), true);
  const sample = sampleFor(gateway.settings.sampleRecords, agent.manifest.id, measuredRecords.agent.all_time.runs);
  return {
    // `record`: the resolved version, all time, compact (as in search); `records`: the full Agent Record.
    ...agentView(agent, summarize(own.all_time), evaluations(agent.manifest.id, agent.manifest.version)),
    description: agent.manifest.description ?? null,
    interface: {
      input: agent.manifest.interface.input,
      output: agent.manifest.interface.output,
      errors: Object.fromEntries(Object.entries(agent.manifest.interface.errors).map(([code, e]) => [code, { description: e.description, billed: e.billed }])),
      examples: agent.manifest.interface.examples,
    },
    example_input: exampleInput(agent.manifest),
    records: { version: own, agent: measuredRecords.agent },
    ...(sample ? { sample } : {}),
    manifest: agent.manifest.doc,
    versions: versions.map((v) => {
      const r = measuredRecords.versions.get(v.manifest.version)!;
      return { version: v.manifest.version, record: summarize(r.all_time), records: r, evaluation: evaluations(v.manifest.id, v.manifest.version).status };
    }),
  };
}
