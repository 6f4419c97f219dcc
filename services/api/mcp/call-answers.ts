/**
 * What call_agent answers, as a ToolAnswer (its structured content and its words): a call held for approval, declined
 * in the client, refused at admission, or finished. Another agent's output and author text reach the words only
 * through untrusted.ts.
 */
import type { Problem } from '../../../shared/core/errors.js';
import type { Held } from '../../../shared/calls/submit/types.js';
import { describeFailure, type ReceiptView } from '../../../shared/receipts/store.js';
import { describeReceipt, type ToolAnswer } from './tools.js';
import { untrustedJson } from './untrusted.js';

/** A refusal as call_agent answers it: from admission (its code), or read back from a receipt (a task's). */
export interface RefusedCall {
  code: string;
  message: string;
  problems?: readonly Problem[];
  receipt: ReceiptView;
}

export function declinedAnswer(held: Pick<Held, 'approval' | 'receipt'>): ToolAnswer {
  return {
    isError: true,
    structured: {
      status: 'rejected',
      error: { code: 'approval_rejected', message: 'the approval was declined in the client; nothing ran and nothing was charged' },
      receipt: held.receipt,
    },
    text: `declined: the call to ${held.approval.agent} did not run; nothing was charged. ${describeReceipt(held.receipt)}`,
  };
}

export function pendingAnswer(held: Pick<Held, 'approval' | 'receipt'>): ToolAnswer {
  const a = held.approval;
  return {
    structured: { status: 'pending_approval', approval: a, receipt: held.receipt },
    text:
      `pending approval ${a.id}: ${a.agent}, worst case ${a.worst_case} ${a.currency} (${a.reasons.join('; ')}). ` +
      `A human decides it with the human key (POST /v0/approvals/${a.id}); once granted, call again with "approval": "${a.id}".`,
  };
}

export function refusedAnswer(r: RefusedCall): ToolAnswer {
  return {
    isError: true,
    structured: {
      status: r.receipt.status,
      error: { code: r.code, message: r.message, ...(r.problems ? { problems: r.problems } : {}) },
      receipt: r.receipt,
    },
    text: `${r.receipt.status}: ${r.message}${r.problems ? ` (${r.problems.map((p) => `${p.path} ${p.message}`).join('; ')})` : ''}. ${describeReceipt(r.receipt)}`,
  };
}

export function finishedAnswer(receipt: ReceiptView, output: unknown): ToolAnswer {
  if (receipt.status === 'succeeded') {
    return {
      structured: { status: 'succeeded', output: output ?? null, receipt },
      text: `${describeReceipt(receipt)}\noutput of ${receipt.agent ?? 'the agent'}:\n${untrustedJson(output ?? null)}`,
    };
  }
  const failure = describeFailure(receipt);
  return {
    isError: true,
    structured: { status: receipt.status, error: failure, receipt },
    text: `failed (${failure.code}). ${describeReceipt(receipt)}`,
  };
}
