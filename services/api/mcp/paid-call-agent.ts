/**
 * call_agent on a keyless session: the x402 MCP binding (docs/payments.md, docs/mcp.md). Without a payment the tool
 * answers `isError` with x402's PaymentRequired object as its `structuredContent` (MPP's challenge in its extensions,
 * `mpp`), never a JSON-RPC error (MCP reserves -32042's range). The client retries with `_meta["x402/payment"]`: the
 * same path as REST's paid calls (verified, recorded once, admitted, collected before crediting), and the result
 * carries `_meta["x402/payment-response"]` (the settlement response, with the gateway's signed offer-receipt).
 */
import { HolonError } from '../../../shared/core/errors.js';
import { parseAmount } from '../../../shared/core/money.js';
import { mppChallenge } from '../../../shared/payments/mpp.js';
import { isPaymentPayload, paymentRequired } from '../../../shared/payments/offer.js';
import { paidCallReceipt, quotePaidCall, submitPaidCall } from '../../../shared/payments/paid-call.js';
import { settlementResponse } from '../../../shared/payments/payment-response.js';
import type { ReceiptView } from '../../../shared/receipts/store.js';
import type { CallAgentOptions } from './call-agent.js';
import { finishedAnswer, refusedAnswer } from './call-answers.js';
import { readOutput } from '../../../shared/calls/answer/outputs.js';
import { callOutcomeClass } from '../../../shared/platform/metrics.js';
import { follow, type Answered } from './follow.js';
import type { CallAgentArgs } from './tool-args.js';
import type { McpDeps } from './tools.js';

/** The resource a paid MCP call is for: the tool and the agent, under the gateway's MCP endpoint. */
const resourceOf = (agent: string) => `mcp://holon/tools/call_agent/${encodeURIComponent(agent)}`;

export async function paidCallAgent(deps: McpDeps, args: CallAgentArgs, options: CallAgentOptions): Promise<Answered> {
  const rails = deps.ctx.payments!;
  const { agent, capability } = args;
  if ((agent === undefined) === (capability === undefined)) throw new HolonError('invalid_request', 'name exactly one of "agent" or "capability"');
  const maxCost = args.max_cost !== undefined ? parseAmount(args.max_cost) : undefined;
  const ask = { ...(agent ? { agent } : {}), ...(capability ? { capability } : {}), input: args.input, ...(maxCost !== undefined ? { maxCost } : {}) };
  const resource = resourceOf(agent ?? capability!);
  const q = quotePaidCall(deps.ctx, rails, { ...ask, resource });
  if (!q.ok) throw new HolonError(q.code, q.message);
  const required = async (error?: string): Promise<Answered> => {
    const asked = await paymentRequired(rails, q.quote.offer, error);
    const challenge = mppChallenge(
      { rails, realm: 'mcp://holon' },
      asked.accepts.find((a) => a.scheme === 'exact'),
      q.quote.offer.description,
    );
    const structured = { ...asked.required, ...(challenge ? { extensions: { ...asked.required.extensions, mpp: { 'www-authenticate': challenge } } } : {}) };
    const pay = `${q.quote.offer.units} base units of ${rails.asset.address} on ${rails.network}`;
    return {
      answer: {
        isError: true,
        structured: structured as never,
        text: `payment required: ${error ? `${error}; ` : ''}pay at most ${pay} (${q.quote.offer.description}) with x402 and call again with _meta["x402/payment"]`,
      },
      outcome: 'refused',
    };
  };
  const given = options.ctx.mcpReq._meta?.['x402/payment'];
  if (given === undefined) return required();
  if (!isPaymentPayload(given)) return required('_meta["x402/payment"] is not an x402 version 2 payment payload');
  const paid = await submitPaidCall(deps.engine, rails, { ...ask, resource, syncAnswer: true }, given);
  switch (paid.kind) {
    case 'refused':
      throw new HolonError(paid.code, paid.message);
    case 'payment_invalid':
      return required(`the payment was not accepted: ${paid.reason}`);
    case 'payment_replayed':
      throw new HolonError('payment_replayed', 'this payment was used already: sign a new one (a new nonce) for a new call');
    case 'idempotent': {
      // The same payment-identifier again: the earlier call's answer (its output while it is kept), nothing paid again.
      const receipt = await paidCallReceipt(deps.ctx, paid.mandateId);
      if (!receipt) throw new HolonError('idempotency_key_in_use', 'the call under this payment-identifier is still running');
      const kept = await readOutput(deps.ctx, receipt.id);
      const settled = await settlementResponse(deps.ctx.signingKey, resource, receipt);
      const answer = finishedAnswer(receipt, kept.kept ? kept.output : null);
      return {
        answer: { ...answer, structured: { ...answer.structured, replayed: true }, ...(settled ? { meta: { 'x402/payment-response': settled } } : {}) },
        outcome: callOutcomeClass(receipt.status === 'succeeded' ? 200 : 502),
      };
    }
    case 'submitted': {
      const s = paid.submitted;
      if (s.kind === 'refused') return { answer: refusedAnswer(s), outcome: 'refused' };
      if (s.kind === 'held') throw new HolonError('gateway_error', 'a paid call is never held for approval');
      // A paid call's questions are answered over REST only: its retry would be another payment.
      const followed = await follow(deps, s, options.ctx, { canAsk: false });
      if (followed.kind !== 'answer') throw new HolonError('gateway_error', 'a paid call was followed into a question');
      const answered: Answered = followed;
      const receipt = (answered.answer.structured as { receipt?: ReceiptView }).receipt;
      const settled = receipt ? await settlementResponse(deps.ctx.signingKey, resource, receipt) : null;
      return settled ? { ...answered, answer: { ...answered.answer, meta: { 'x402/payment-response': settled } } } : answered;
    }
  }
}
