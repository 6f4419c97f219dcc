/**
 * GET /v0/agents?q=&capability=&mandate= — the catalogue, ranked. With a mandate: costs converted into its
 *   currency, and the agents it does not allow listed apart with the reasons.
 * GET /v0/agents/{ns}/{name}[@range] — one agent: the resolved version's manifest, its measured record,
 *   and every listed version.
 */
import { Router } from 'express';
import { HolonError } from '../../../shared/errors.js';
import type { GatewayContext } from '../../../shared/gateway/context.js';
import { loadMandate } from '../../../shared/gateway/mandates.js';
import { EMPTY_RECORD, loadRecords, recordKey, type MeasuredRecord } from '../../../shared/gateway/records.js';
import { checkCall } from '../../../shared/mandate/check-call.js';
import type { Manifest } from '../../../shared/manifest/types.js';
import { formatAmount } from '../../../shared/money.js';
import { ownWorstCase, worstCase } from '../../../shared/pricing.js';
import { costPerSuccess, rankCapability } from '../../../shared/resolution.js';
import type { AgentVersion } from '../../../shared/runtime/types.js';
import { asyncRoute } from '../route.js';

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

function recordView(r: MeasuredRecord, m: Manifest) {
  return {
    runs: r.runs,
    successes: r.successes,
    success_rate: r.runs ? Number((r.successes / r.runs).toFixed(4)) : null,
    cost_per_successful_run: formatAmount(costPerSuccess(r, ownWorstCase(m.pricing))),
    currency: m.pricing.currency,
  };
}

function agentView(a: AgentVersion, record: MeasuredRecord) {
  const m = a.manifest;
  return {
    id: m.id,
    version: m.version,
    summary: m.summary,
    capabilities: m.capabilities,
    license: m.license,
    origin: a.origin,
    pricing: pricingView(m),
    record: recordView(record, m),
    ...(m.data ? { data: { attested: true, ...(m.doc.data as object) } } : {}),
  };
}

export function agentRoutes(gateway: GatewayContext): Router {
  const router = Router();

  router.get('/v0/agents', asyncRoute(async (req, res) => {
    const q = req.query.q === undefined ? undefined : String(req.query.q);
    const capability = req.query.capability === undefined ? undefined : String(req.query.capability);
    const mandateId = req.query.mandate === undefined ? undefined : String(req.query.mandate);
    const found = gateway.registry.search({ ...(q ? { q } : {}), ...(capability ? { capability } : {}) });
    const records = await loadRecords(gateway.db, found.map((a) => ({ id: a.manifest.id, version: a.manifest.version })));
    const rec = (a: AgentVersion) => records.get(recordKey(a.manifest.id, a.manifest.version)) ?? EMPTY_RECORD;
    if (!mandateId) {
      res.json({ agents: found.map((a) => agentView(a, rec(a))) });
      return;
    }
    const stored = await loadMandate(gateway.db, mandateId);
    if (!stored) throw new HolonError('not_found', 404, `there is no mandate ${mandateId}`);
    const { mandate } = stored;
    const now = gateway.now();
    const currency = mandate.budget.currency;
    if (capability && !capability.endsWith('.*')) {
      const ranking = rankCapability(
        capability,
        found.map((a) => ({ manifest: a.manifest, facts: { origin: a.origin, evaluation: 'none' as const, record: rec(a) }, record: rec(a), usedBefore: true })),
        mandate,
        { depth: mandate.depth, delegated: false, usedBefore: true, now },
      );
      const byManifest = new Map(found.map((a) => [a.manifest, a]));
      res.json({
        currency,
        agents: ranking.ranked.map((r) => ({
          ...agentView(byManifest.get(r.manifest)!, rec(byManifest.get(r.manifest)!)),
          worst_case: formatAmount(r.worstCase),
          cost_per_successful_run: formatAmount(r.costPerSuccess),
          decision: r.admission.decision,
        })),
        denied: ranking.denied.map((d) => ({ id: d.manifest.id, version: d.manifest.version, reasons: d.reasons })),
      });
      return;
    }
    const allowed = [];
    const denied = [];
    for (const a of found) {
      const wc = worstCase(a.manifest, mandate.budget);
      const admission = checkCall(mandate, a.manifest, {
        worstCase: wc.ok ? wc.total : null, depth: mandate.depth, delegated: false, via: { kind: 'id' }, usedBefore: true, now,
        facts: { origin: a.origin, evaluation: 'none', record: rec(a) },
      });
      if (admission.decision === 'deny') denied.push({ id: a.manifest.id, version: a.manifest.version, reasons: admission.reasons });
      else allowed.push({ ...agentView(a, rec(a)), worst_case: wc.ok ? formatAmount(wc.total) : null, decision: admission.decision });
    }
    res.json({ currency, agents: allowed, denied });
  }));

  router.get(/^\/v0\/agents\/([^/]+)\/([^/@]+)(?:@(.+))?$/, asyncRoute(async (req, res) => {
    const p = req.params as Record<string, string | undefined>;
    const ref = `${p[0]}/${p[1]}${p[2] ? `@${decodeURIComponent(p[2])}` : ''}`;
    const resolved = gateway.registry.resolve(ref);
    if (!resolved.ok) throw new HolonError(resolved.code === 'invalid_ref' ? 'invalid_request' : 'not_found', resolved.code === 'invalid_ref' ? 400 : 404, resolved.message);
    const versions = gateway.registry.versions(resolved.agent.manifest.id);
    const records = await loadRecords(gateway.db, versions.map((v) => ({ id: v.manifest.id, version: v.manifest.version })));
    const rec = (a: AgentVersion) => records.get(recordKey(a.manifest.id, a.manifest.version)) ?? EMPTY_RECORD;
    res.json({
      ...agentView(resolved.agent, rec(resolved.agent)),
      manifest: resolved.agent.manifest.doc,
      versions: versions.map((v) => ({ version: v.manifest.version, record: recordView(rec(v), v.manifest) })),
    });
  }));

  return router;
}
