/**
 * History for the Agent Record without running anything: finished calls written straight into `calls` and
 * `call_events`, as settlement leaves them (no money moves, so the ledger audit is unaffected). Each run is its own
 * root call, paid by `payer` (an account created when missing) under one synthetic mandate of that payer, or the
 * child of a root paid by `rootPayer`.
 */
import type { Knex } from 'knex';
import { ensureAccount } from '../../shared/ledger/accounts.js';

export interface SyntheticRun {
  agentId: string;
  version: string;
  status: 'succeeded' | 'failed';
  code?: string;
  latency: number;
  /** micro-units */
  cost?: number;
  currency?: string;
  daysAgo?: number;
  /** Who paid for it (default `history-payer`): the Agent Record counts distinct payers, never the author. */
  payer?: string;
  /** Delegated: the run is a child of a root call this account paid for (the root has no event of its own). */
  rootPayer?: string;
}

const DAY = 86_400_000;
let synthetic = 0;

async function mandateOf(knex: Knex, payer: string, currency: string): Promise<string> {
  const id = `${payer}/history-${currency.toLowerCase()}`;
  await ensureAccount(knex, payer);
  await knex('mandates')
    .insert({ id, issuer: payer, grantee: `${payer}/assistant`, doc: JSON.stringify({ id }), currency, total: '0' })
    .onConflict('id')
    .ignore();
  return id;
}

export async function insertRuns(knex: Knex, runs: readonly SyntheticRun[]): Promise<void> {
  const now = Date.now();
  for (const run of runs) {
    const payer = run.payer ?? 'history-payer';
    const currency = run.currency ?? 'EUR';
    const mandateId = await mandateOf(knex, payer, currency);
    const id = `synthetic-${process.pid}-${++synthetic}`;
    const at = new Date(now - (run.daysAgo ?? 0) * DAY);
    const row = (callId: string, by: string, mandate: string) => ({
      id: callId,
      mandate_id: mandate,
      caller: `${by}/assistant`,
      agent_id: run.agentId,
      agent_version: run.version,
      payer: by,
      currency,
      worst_case: String(run.cost ?? 0),
      status: run.status,
      error_code: run.code ?? null,
      timeout_ms: 1000,
      finished_at: at,
      created_at: at,
    });
    if (run.rootPayer === undefined) await knex('calls').insert({ ...row(id, payer, mandateId), root_id: id });
    else {
      const rootId = `${id}-root`;
      await knex('calls').insert({ ...row(rootId, run.rootPayer, await mandateOf(knex, run.rootPayer, currency)), root_id: rootId });
      await knex('calls').insert({ ...row(id, payer, mandateId), root_id: rootId, parent_id: rootId, depth: 1, delegated: true });
    }
    await knex('call_events').insert({
      call_id: id,
      agent_id: run.agentId,
      agent_version: run.version,
      status: run.status,
      error_code: run.code ?? null,
      latency_ms: run.latency,
      cost: String(run.cost ?? 0),
      currency,
      created_at: at,
    });
  }
}
