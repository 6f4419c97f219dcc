/**
 * What a webhook delivery carries (docs/webhooks.md): the body, and the Standard Webhooks headers signed with the
 * `standardwebhooks` library — never our own HMAC.
 *
 *   webhook-id:        the delivery's id, the same on every attempt (the receiver's idempotency key)
 *   webhook-timestamp: this attempt's time, unix seconds
 *   webhook-signature: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, one per signing secret, space-separated
 */
import { Webhook } from 'standardwebhooks';

/** The payload's version: a change a receiver must know about gets a new number (and a new event type if need be). */
const PAYLOAD_VERSION = 1;
const CALL_COMPLETED = 'call.completed';

interface CallCompleted {
  type: typeof CALL_COMPLETED;
  version: typeof PAYLOAD_VERSION;
  /** When the delivery was created (settlement), ISO 8601: the same on every attempt. */
  timestamp: string;
  call: { id: string; status: string };
  status: string;
  /** The agent's output for a succeeded call; null for a failed one, or when it was no longer kept. */
  output: unknown;
  /** Present (true) when a succeeded call's output was no longer kept, whatever the reason (kept for receivers that read it). */
  output_expired?: true;
  /** Why a succeeded call's output was no longer kept: every consumer the call declared had it, or HOLON_RESULT_TTL_S ended. */
  output_gone?: 'collected' | 'expired';
  receipt: unknown;
}

export function callCompleted(input: {
  callId: string;
  status: string;
  createdAt: Date;
  output: unknown;
  outputGone?: 'collected' | 'expired';
  receipt: unknown;
}): string {
  const body: CallCompleted = {
    type: CALL_COMPLETED,
    version: PAYLOAD_VERSION,
    timestamp: input.createdAt.toISOString(),
    call: { id: input.callId, status: input.status },
    status: input.status,
    output: input.output ?? null,
    ...(input.outputGone ? { output_expired: true as const, output_gone: input.outputGone } : {}),
    receipt: input.receipt,
  };
  return JSON.stringify(body);
}

const CALL_INPUT_REQUIRED = 'call.input_required';

/** A running call's agent asked its caller a question: answer it with POST /v0/calls/{id}/input (docs/webhooks.md). */
export function callInputRequired(input: { callId: string; question: number; request: unknown; createdAt: Date }): string {
  return JSON.stringify({
    type: CALL_INPUT_REQUIRED,
    version: PAYLOAD_VERSION,
    timestamp: input.createdAt.toISOString(),
    call: { id: input.callId, status: 'input_required' },
    question: input.question,
    request: input.request,
    answer: { method: 'POST', path: `/v0/calls/${input.callId}/input` },
  });
}

/** The three Standard Webhooks headers for one attempt, signed with every secret given (newest first). */
export function webhookHeaders(secrets: readonly string[], id: string, at: Date, body: string): Record<string, string> {
  if (secrets.length === 0) throw new Error('no secret to sign with');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' '),
  };
}
