/**
 * The settlement's first step inside its transaction, the lock order's first (docs/ledger.md, "Lock order"): of the
 * locked `settling` calls, those whose children are all settled have their holds ended (posted or voided) and their
 * journal entries recorded — each kind in one statement for all the calls — then what their plan reads besides: the
 * mandates above a parent hold, a passthrough call's children's costs. A call with children still open is deferred.
 */
import { endedNow, resolveHolds } from '../../ledger/holds.js';
import { recordEntries } from '../../ledger/entries.js';
import type { Tx } from '../../db/connect.js';
import { paymentFailed } from '../call-outcome.js';
import { type CallToSettle, holdEndOf, journalEntryOf, type PlanInput } from './plan.js';
import type { Prepared } from './prepare.js';
import { ancestorMandates, childrenCost, openChildren, type SettlingCall } from './rows.js';

/** The calls that settle now, in their order, and those deferred (children still open). */
async function liveCalls(trx: Tx, calls: readonly SettlingCall[]): Promise<{ live: CallToSettle[]; deferred: string[] }> {
  const live: CallToSettle[] = [];
  const deferred: string[] = [];
  for (const call of calls) {
    if (call.subMandateId && (await openChildren(trx, call.id)) > 0) deferred.push(call.id);
    else live.push(call as CallToSettle);
  }
  return { live, deferred };
}

export async function ownRowsFirst(
  trx: Tx,
  calls: readonly SettlingCall[],
  preparedOf: (callId: string) => Prepared,
): Promise<{ inputs: PlanInput[]; deferred: string[] }> {
  const { live: found, deferred } = await liveCalls(trx, calls);
  // A paid call whose payment could not be collected is unbilled: nothing is credited that was not collected.
  const live = found.map((call) => (preparedOf(call.id).payment?.failed ? { ...call, outcome: paymentFailed(call.outcome) } : call));
  if (live.length === 0) return { inputs: [], deferred };
  const holds = await resolveHolds(
    trx,
    live.map((call) => ({ id: call.id, as: holdEndOf(call) })),
  );
  const entries = live.flatMap((call) => {
    const entry = journalEntryOf(call, preparedOf(call.id).chain);
    return entry ? [{ id: call.id, entry }] : [];
  });
  const posted = await recordEntries(
    trx,
    entries.map((e) => e.entry),
  );
  const entryOf = new Map(entries.map((e, i) => [e.id, posted[i]!]));
  const inputs: PlanInput[] = [];
  for (const call of live) {
    const { chain, passthrough } = preparedOf(call.id);
    const hold = holds.get(call.id)!;
    const parentHold = endedNow(hold) ? hold.parentHoldId : null;
    const ancestors = parentHold ? await ancestorMandates(trx, parentHold) : [];
    const downstream = call.subMandateId && passthrough ? await childrenCost(trx, call.id) : 0n;
    const payment = preparedOf(call.id).payment?.receipt;
    inputs.push({ call, chain, hold, entry: entryOf.get(call.id) ?? null, ancestors, downstream, ...(payment ? { payment } : {}) });
  }
  return { inputs, deferred };
}
