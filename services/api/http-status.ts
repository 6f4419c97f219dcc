/**
 * The one map from the gateway's error codes to HTTP statuses (shared/core/errors.ts `ERROR_CODES`): the domain
 * answers codes, and REST, the /mcp transport's errors and the OpenAPI document's error responses read their
 * status here. Exhaustive: a new code does not compile until it has its status.
 */
import type { ErrorCode } from '../../shared/core/errors.js';

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a declarative table, one case per code
export function httpStatusOf(code: ErrorCode): number {
  switch (code) {
    case 'bad_request':
    case 'invalid_json':
    case 'invalid_request':
    case 'invalid_ref':
    case 'invalid_mandate':
    case 'not_a_user_account':
    case 'invalid_handle':
    case 'invalid_entry':
    case 'invalid_code':
      return 400;
    case 'unauthorized':
      return 401;
    case 'insufficient_funds':
    case 'payment_required':
    case 'payment_invalid':
    case 'payment_failed':
      return 402;
    case 'forbidden':
    case 'denied':
    case 'invalid_delegation':
    case 'account_disabled':
    case 'email_blocked':
    case 'origin_not_allowed':
    case 'host_not_allowed':
    case 'foreign_namespace':
    case 'github_not_linked':
    case 'invalid_link':
    case 'link_expired':
      return 403;
    case 'not_found':
    case 'unknown_mandate':
    case 'unknown_agent':
    case 'no_matching_version':
    case 'unknown_capability':
    case 'unknown_account':
    case 'unknown_hold':
    case 'demo_not_available':
      return 404;
    case 'approval_used':
    case 'payment_replayed':
    case 'idempotency_key_in_use':
    case 'idempotency_key_interrupted':
    case 'idempotency_conflict':
    case 'approval_decided':
    case 'mandate_exists':
    case 'already_disabled':
    case 'handle_taken':
    case 'email_taken':
    case 'github_linked':
    case 'version_taken':
    case 'yanked':
    case 'already_yanked':
    case 'shipped_agent':
    case 'no_suite':
    case 'evaluation_running':
    case 'file_quota_exceeded':
    case 'no_delivery':
    case 'no_question':
    case 'question_mismatch':
      return 409;
    case 'body_too_large':
    case 'file_too_large':
      return 413;
    case 'unsupported_media_type':
      return 415;
    case 'rejected_input':
    case 'payment_unsupported':
    case 'file_not_found':
    case 'idempotency_key_reused':
    case 'invalid_manifest':
    case 'invalid_draft':
    case 'endpoint_refused':
    case 'endpoint_unreachable':
    case 'endpoint_failed':
    case 'endpoint_not_json':
    case 'endpoint_too_large':
    case 'credential_unusable':
      return 422;
    case 'rate_limited':
    case 'too_many_waits':
      return 429;
    case 'gateway_error':
      return 500;
    case 'github_error':
      return 502;
    case 'busy':
    case 'queue_unavailable':
    case 'database_unavailable':
    case 'github_sign_in_off':
    case 'payments_off':
    case 'github_unavailable':
    case 'publishing_off':
    case 'credentials_unavailable':
    case 'webhooks_unavailable':
    case 'demo_unavailable':
      return 503;
    default: {
      const unmapped: never = code;
      throw new Error(`no HTTP status for the error code ${String(unmapped)}`);
    }
  }
}

/** The code of an HTTP error that did not come from the gateway's own code (a body parser's 4xx). */
export function codeOfHttpStatus(status: number): ErrorCode {
  if (status === 413) return 'body_too_large';
  if (status === 415) return 'unsupported_media_type';
  return 'bad_request';
}
