/**
 * What a call's settlement needs before its transaction: its royalty chain (the author and the upstream authors of
 * forks), with every account's rows created, so that the transaction then only takes row locks, in the lock order
 * (docs/ledger.md, "Lock order").
 */
import { ensureAccountCached, PLATFORM_ACCOUNT } from '../../ledger/accounts.js';
import { ensureBalanceRow } from '../../ledger/holds.js';
import type { Manifest } from '../../core/manifest/types.js';
import type { ChainLink } from '../../core/splits.js';
import type { Registry } from '../../registry/registry.js';
import type { ServiceContext } from '../../context.js';
import { ratesInto } from '../../core/fx-table.js';
import { formatRate } from '../../core/money.js';
import { fromJsonb } from '../../db/connect.js';
import { type CollectedPayment, collectForCall } from '../../payments/collect.js';
import type { CallOutcome } from '../call-outcome.js';

export interface Prepared {
  /** The author first, then each upstream author, each with the royalty it pays upstream. */
  chain: readonly ChainLink[];
  /** Whether the agent's children are paid out of its own hold (`downstream.mode: passthrough`). */
  passthrough: boolean;
  /** A call paid from outside: its payment, collected (or failed) before the settlement credits anybody. */
  payment?: CollectedPayment;
}

/** The author and the upstream authors of forks, each with the royalty it pays upstream. */
function royaltyChain(manifest: Manifest, registry: Registry): ChainLink[] {
  const chain: ChainLink[] = [];
  let current: Manifest | undefined = manifest;
  const seen = new Set<string>();
  while (current && chain.length < 9 && !seen.has(current.id)) {
    seen.add(current.id);
    const upstream: Manifest | undefined = current.lineage
      ? registry.get(current.lineage.forkedFrom.id, current.lineage.forkedFrom.version)?.manifest
      : undefined;
    // A fork whose upstream is no longer listed keeps everything: its royalty has nobody to go to.
    chain.push(upstream && current.lineage ? { account: current.namespace, royalty: current.lineage.royalty } : { account: current.namespace });
    current = upstream;
  }
  return chain;
}

/** The call's columns `prepare` reads (rows.ts PRE_COLUMNS). */
interface PreRow {
  id: string;
  agent_id: string;
  agent_version: string;
  currency: string;
  payer: string;
}

/** A call paid from outside (its payer is the chain's account): its payment collected for what it is billed. */
async function paymentOf(ctx: ServiceContext, pre: PreRow, agentCurrency: string | undefined): Promise<CollectedPayment | undefined> {
  const rails = ctx.payments;
  if (!rails || pre.payer !== rails.externalAccount) return undefined;
  // Only a paid call reads its mandate and outcome here: every other settlement's pre-read stays as narrow as it was.
  const row = (await ctx.db('calls').where({ id: pre.id }).first('mandate_id', 'outcome')) as { mandate_id: string; outcome: unknown };
  const outcome = fromJsonb(row.outcome) as CallOutcome;
  const rate = agentCurrency && agentCurrency !== pre.currency ? ratesInto(pre.currency, rails.fx)[agentCurrency] : undefined;
  return collectForCall(ctx, {
    mandateId: row.mandate_id,
    billedMicros: outcome.billed ? BigInt(outcome.own) : 0n,
    ...(rate ? { rate: { from: agentCurrency!, to: pre.currency, rate: formatRate(rate) } } : {}),
  });
}

export async function prepare(ctx: ServiceContext, pre: PreRow): Promise<Prepared> {
  const agent = ctx.registry.get(pre.agent_id, pre.agent_version);
  const chain = agent ? royaltyChain(agent.manifest, ctx.registry) : [{ account: String(pre.agent_id).split('/')[0]! }];
  for (const link of chain) {
    await ensureAccountCached(ctx.db, link.account);
    await ensureBalanceRow(ctx.db, link.account, String(pre.currency));
  }
  await ensureAccountCached(ctx.db, PLATFORM_ACCOUNT);
  await ensureBalanceRow(ctx.db, PLATFORM_ACCOUNT, String(pre.currency));
  const payment = await paymentOf(ctx, pre, agent?.manifest.pricing.currency);
  return { chain, passthrough: agent?.manifest.downstream?.mode === 'passthrough', ...(payment ? { payment } : {}) };
}
