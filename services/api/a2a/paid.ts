/**
 * Paying per call over A2A, without a key (docs/a2a.md, "Paying per call"): the a2a-x402 extension's standalone
 * flow (v0.2) over the same paid call as REST's and MCP's (shared/payments/paid-call.ts: verified before anything is
 * reserved, recorded once, collected before crediting).
 *
 *   a message, no key         → task `input-required`, its status message's metadata `x402.payment.status:
 *                               payment-required` and `x402.payment.required` (x402's PaymentRequired, v2), the quote
 *                               in words (`holon/quote`); what was asked waits (the ephemeral store, keyed by the task)
 *   a message on that task    → `x402.payment.status: payment-submitted` with `x402.payment.payload`: the call, paid;
 *                               the task answered when it ends, `payment-completed` (or `payment-failed`) with
 *                               `x402.payment.receipts` (x402's settlement response and the gateway's offer-receipt)
 *                               and the Holon receipt (`payment-verified`: an unbilled call, nothing collected);
 *                               `payment-rejected`: the task is rejected, nothing ran
 * A payment that does not verify is asked for again on the same task. A keyless caller reads no task later.
 */
import { randomBytes } from 'node:crypto';
import { type Message, type Task, TaskState } from '@a2a-js/sdk';
import { RequestMalformedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { agentMessage, taskOf } from '../../../shared/a2a/task-view.js';
import { HolonError } from '../../../shared/core/errors.js';
import { isPaymentPayload, paymentRequired } from '../../../shared/payments/offer.js';
import { type PaidCallAsk, paidCallReceipt, quotePaidCall, quoteWords, submitPaidCall } from '../../../shared/payments/paid-call.js';
import { settlementResponse } from '../../../shared/payments/payment-response.js';
import { loadReceiptTree } from '../../../shared/receipts/store.js';
import type { A2aCaller } from './caller.js';
import type { A2aDeps } from './deps.js';

/** The a2a-x402 extension (standalone flow), declared on cards when payments from outside are on. */
export const X402_EXTENSION = 'https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2';
const STATUS = 'x402.payment.status';
const pendingKey = (id: string) => `a2a-pay:${id}`;
/** How long past its timeout a paid call may take to settle before the task is answered as it stands. */
const SETTLE_GRACE_MS = 60_000;

type Ask = Omit<PaidCallAsk, 'resource'>;
interface Pending {
  ask: { agent?: string; capability?: string; input: unknown; maxCost?: string };
  resource: string;
}

const task = (id: string, state: TaskState, text: string, metadata: Record<string, unknown>): Task => ({
  id,
  contextId: id,
  status: { state, message: { ...agentMessage(id, text), metadata }, timestamp: new Date().toISOString() },
  artifacts: [],
  history: [],
  metadata: undefined,
});

/** The payment a call asks for, as a task waiting on its payer; what was asked waits under the task's id. */
export async function askPayment(deps: A2aDeps, who: A2aCaller, ask: Ask, reason?: { id: string; why: string }): Promise<Task> {
  const { ctx } = deps;
  const rails = ctx.payments!;
  const resource = `${who.base}${who.target.kind === 'agent' ? `/a2a/${who.target.id}` : '/a2a/_gateway'}`;
  const q = quotePaidCall(ctx, rails, { ...ask, resource });
  if (!q.ok) throw new HolonError(q.code, q.message);
  const asked = await paymentRequired(rails, q.quote.offer, reason?.why);
  const id = reason?.id ?? `pay_${randomBytes(12).toString('hex')}`;
  const pending: Pending = {
    ask: {
      ...(ask.agent ? { agent: ask.agent } : {}),
      ...(ask.capability ? { capability: ask.capability } : {}),
      input: ask.input,
      ...(ask.maxCost !== undefined ? { maxCost: ask.maxCost.toString() } : {}),
    },
    resource,
  };
  await ctx.messaging.store.put(pendingKey(id), JSON.stringify(pending), q.quote.offer.maxTimeoutSeconds + 600);
  const words = reason ? `the payment was not accepted: ${reason.why}; sign a new one` : `payment required: at most ${q.quote.offer.description}`;
  return task(id, TaskState.TASK_STATE_INPUT_REQUIRED, words, {
    [STATUS]: 'payment-required',
    'x402.payment.required': asked.required,
    'holon/quote': quoteWords(rails, q.quote),
    ...(reason ? { 'x402.payment.error': reason.why } : {}),
  });
}

/** A payer's message on a task that asked for payment: the call, paid, answered once it ends. */
export async function payAndRun(deps: A2aDeps, who: A2aCaller, message: Message): Promise<Task> {
  const { ctx } = deps;
  const id = message.taskId;
  const text = await ctx.messaging.store.take(pendingKey(id));
  if (text === undefined) throw new TaskNotFoundError(`no payment is asked on task ${id.slice(0, 100)} (paid already, or past its time)`);
  const pending = JSON.parse(text) as Pending;
  const ask: Ask = { ...pending.ask, ...(pending.ask.maxCost !== undefined ? { maxCost: BigInt(pending.ask.maxCost) } : {}) } as Ask;
  const meta = message.metadata ?? {};
  if (meta[STATUS] === 'payment-rejected')
    return task(id, TaskState.TASK_STATE_REJECTED, 'the payment was declined: nothing ran and nothing was charged', { [STATUS]: 'payment-rejected' });
  const payload = meta['x402.payment.payload'];
  if (meta[STATUS] !== 'payment-submitted' || !isPaymentPayload(payload)) {
    await ctx.messaging.store.put(pendingKey(id), text, 600);
    throw new RequestMalformedError('send "x402.payment.status": "payment-submitted" with an x402 version 2 payment payload in "x402.payment.payload"');
  }
  const paid = await submitPaidCall(deps.engine, ctx.payments!, { ...ask, resource: pending.resource, syncAnswer: false }, payload);
  switch (paid.kind) {
    case 'refused':
      throw new HolonError(paid.code, paid.message);
    case 'payment_invalid':
      return askPayment(deps, who, ask, { id, why: paid.reason });
    case 'payment_replayed':
      // The task still asks for its payment: a new one may be sent on it.
      await ctx.messaging.store.put(pendingKey(id), text, 600);
      throw new RequestMalformedError({
        message: 'this payment was used already: sign a new one (a new nonce) for a new call',
        metadata: { code: 'payment_replayed' },
      });
    case 'idempotent':
      return answered(deps, who, { id, callId: (await paidCallReceipt(ctx, paid.mandateId))?.id, resource: pending.resource });
    case 'submitted': {
      const s = paid.submitted;
      const callId = s.kind === 'queued' ? s.callId : s.receipt.id;
      if (s.kind === 'queued') await deps.waiter.wait(callId, s.timeoutMs + SETTLE_GRACE_MS);
      return answered(deps, who, { id, callId, resource: pending.resource });
    }
  }
}

/** The paid call's task under the id its payer knows, with x402's status and receipts. */
async function answered(deps: A2aDeps, who: A2aCaller, p: { id: string; callId: string | undefined; resource: string }): Promise<Task> {
  const { ctx } = deps;
  const view = p.callId ? await taskOf({ ctx, base: who.base, contextId: p.id }, p.callId) : undefined;
  if (!view) return task(p.id, TaskState.TASK_STATE_WORKING, 'the paid call is still running', { [STATUS]: 'payment-submitted' });
  const receipt = await loadReceiptTree(ctx.db, p.callId!);
  const settled = receipt ? await settlementResponse(ctx.signingKey, p.resource, receipt) : null;
  // Collected: completed; a transfer that failed: failed; an unbilled call: verified, nothing collected.
  const status = !receipt
    ? 'payment-submitted'
    : receipt.error === 'payment_failed'
      ? 'payment-failed'
      : receipt.billed && receipt.payment?.transaction
        ? 'payment-completed'
        : 'payment-verified';
  const message = view.status?.message;
  return {
    ...view,
    id: p.id,
    status: view.status && {
      ...view.status,
      message: message && {
        ...message,
        taskId: p.id,
        metadata: { ...message.metadata, [STATUS]: status, ...(settled ? { 'x402.payment.receipts': [settled] } : {}) },
      },
    },
    metadata: { ...view.metadata, 'holon/call': p.callId },
  };
}
