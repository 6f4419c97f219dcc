/** The gateway's errors: stable codes, plain words, and every problem of a bad input with its path. */

/** One problem in a document: a JSON path ("$.pricing.amount") and a plain-words message. */
export interface Problem {
  path: string;
  message: string;
}

/**
 * Every stable code a request can be refused or failed with (gateway.md; manifest.md §3 for the agent's own, which
 * are not these). The domain answers codes; what each means on the wire — its HTTP status, its MCP result — is
 * decided at the edge, in one place per surface (services/api/http-status.ts).
 */
export const ERROR_CODES = [
  // The request itself
  'bad_request',
  'invalid_json',
  'invalid_request',
  'unsupported_media_type',
  'body_too_large',
  'unauthorized',
  'forbidden',
  'rate_limited',
  'too_many_waits',
  'not_found',
  // A call's admission (shared/calls/submit): refusals that get a receipt
  'unknown_mandate',
  'invalid_ref',
  'unknown_agent',
  'no_matching_version',
  'unknown_capability',
  'denied',
  'approval_used',
  'rejected_input',
  'file_not_found',
  'insufficient_funds',
  'invalid_delegation',
  // Idempotency
  'idempotency_key_in_use',
  'idempotency_key_interrupted',
  'idempotency_key_reused',
  'idempotency_conflict',
  // Approvals, mandates, accounts, keys
  'approval_decided',
  'mandate_exists',
  'invalid_mandate',
  'unknown_account',
  'unknown_hold',
  'account_disabled',
  'already_disabled',
  'not_a_user_account',
  'invalid_handle',
  'handle_taken',
  'email_taken',
  'email_blocked',
  'invalid_entry',
  // Sign-in
  'github_sign_in_off',
  'github_linked',
  'invalid_code',
  'origin_not_allowed',
  'host_not_allowed',
  // Publishing, drafts, evaluation, credentials
  'publishing_off',
  'foreign_namespace',
  'github_not_linked',
  'invalid_manifest',
  'version_taken',
  'github_error',
  'github_unavailable',
  'yanked',
  'already_yanked',
  'shipped_agent',
  'no_suite',
  'evaluation_running',
  'invalid_draft',
  'endpoint_refused',
  'endpoint_unreachable',
  'endpoint_failed',
  'endpoint_not_json',
  'endpoint_too_large',
  'credential_unusable',
  'credentials_unavailable',
  // Money from outside (docs/payments.md)
  'payment_required',
  'payment_invalid',
  'payment_replayed',
  'payment_failed',
  'payment_unsupported',
  'payments_off',
  // Calls that stream and ask (docs/lifecycle.md)
  'no_question',
  'question_mismatch',
  // Files, deliveries, demo
  'file_too_large',
  'file_quota_exceeded',
  'invalid_link',
  'link_expired',
  'no_delivery',
  'webhooks_unavailable',
  'demo_unavailable',
  'demo_not_available',
  // The gateway
  'busy',
  'queue_unavailable',
  'database_unavailable',
  'gateway_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The one error type of the gateway: a stable `code` and a plain-words message, plus every problem of bad input. */
export class HolonError extends Error {
  override readonly name = 'HolonError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly problems: readonly Problem[] = [],
  ) {
    super(message);
  }

  toJSON(): { error: { code: string; message: string; problems?: readonly Problem[] } } {
    return {
      error: { code: this.code, message: this.message, ...(this.problems.length ? { problems: this.problems } : {}) },
    };
  }
}

/** Build a JSON path such as `$.interface.errors["bad-code"]` or `$.calls[2].max_cost`. */
export function jsonPath(...segments: ReadonlyArray<string | number>): string {
  let out = '$';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(s)) out += `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}
