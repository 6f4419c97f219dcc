// @ts-check
// The console's words for the gateway's codes, in one place: what a failed run's code means (the codes an agent can
// never declare, shared/core/manifest/types.ts RESERVED_ERROR_CODES), what a refused request's code means
// (shared/core/errors.ts ERROR_CODES), what to do about a draft's endpoint refusals, and why a GitHub sign-in came
// back refused (#login_error=<reason>). tests/unit/console-error-words.test.ts checks that every code has words.

/**
 * The gateway's own failure codes (manifest.md §3), in plain words. None of them is billed, except that a per_unit
 * stream cut by the budget or the caller bills the units it delivered (docs/lifecycle.md).
 */
export const RUN_ERRORS = {
  timeout: 'the agent did not answer within its time limit',
  invalid_output: 'the agent answered something that does not match its own output schema',
  agent_error: 'the agent crashed or answered something that is not a valid result',
  runtime_unavailable: 'the agent’s server could not be reached',
  gateway_error: 'the gateway failed on its side',
  gateway_restarted: 'the gateway restarted while the call ran',
  file_not_found: 'a file named in the input is not yours, or has expired',
  cancelled: 'the call was cancelled',
  budget_reached: 'the stream reached what was reserved for the call',
  no_answer: 'nobody answered the agent’s question in time',
  payment_failed: 'the payment could not be collected',
  rejected_input: 'the input does not match the agent’s schema',
  denied: 'the mandate does not allow this call',
};

/** A refused request's code in plain words: said when the answer carries no message of its own (api.js ApiError). */
export const REQUEST_ERRORS = {
  bad_request: 'the request is not one the gateway understands',
  invalid_json: 'the request’s body is not valid JSON',
  invalid_request: 'the request has problems, listed with it',
  unsupported_media_type: 'the request’s body is not JSON',
  body_too_large: 'the request’s body is too large',
  unauthorized: 'no valid key came with the request',
  forbidden: 'this key may not do that',
  rate_limited: 'too many requests: wait a while, then try again',
  too_many_waits: 'too many answers are awaited at once: try again shortly',
  not_found: 'there is nothing at this address',
  unknown_mandate: 'no such mandate',
  invalid_ref: 'the agent is not named as namespace/name or namespace/name@version',
  unknown_agent: 'no such agent is listed',
  no_matching_version: 'no listed version matches',
  unknown_capability: 'no listed agent offers this capability',
  denied: 'the mandate does not allow this call',
  approval_used: 'this approval was used already',
  rejected_input: 'the input does not match the agent’s schema',
  file_not_found: 'a file named in the input is not yours, or has expired',
  insufficient_funds: 'the balance is too low for this call’s worst case',
  invalid_delegation: 'this delegation is not allowed by the parent mandate',
  idempotency_key_in_use: 'a request with this Idempotency-Key is still running',
  idempotency_key_interrupted: 'the request with this Idempotency-Key was interrupted',
  idempotency_key_reused: 'this Idempotency-Key was used for another request',
  idempotency_conflict: 'this Idempotency-Key was used with another body',
  approval_decided: 'this approval was decided already',
  mandate_exists: 'a mandate with this id exists already',
  invalid_mandate: 'the mandate has problems, listed with it',
  unknown_account: 'no such account',
  unknown_hold: 'no such hold',
  account_disabled: 'this account is disabled',
  already_disabled: 'this account is disabled already',
  not_a_user_account: 'this is not a user account',
  invalid_handle: 'this is not a valid handle',
  handle_taken: 'this handle is taken',
  email_taken: 'this email has an account already',
  email_blocked: 'this email may not sign up',
  invalid_entry: 'the entry has problems, listed with it',
  github_sign_in_off: 'signing in with GitHub is off on this gateway',
  github_linked: 'this account is linked to GitHub already',
  invalid_code: 'the sign-in code is unknown, used or expired',
  origin_not_allowed: 'requests from this origin are not allowed',
  host_not_allowed: 'this host name is not allowed',
  publishing_off: 'publishing is off on this gateway',
  foreign_namespace: 'that namespace is not yours',
  github_not_linked: 'publishing needs an account linked to GitHub',
  invalid_manifest: 'the manifest has problems, listed with it',
  version_taken: 'this version number is taken',
  github_error: 'GitHub answered with an error',
  github_unavailable: 'GitHub could not be reached',
  yanked: 'this version was yanked',
  already_yanked: 'this version was yanked already',
  shipped_agent: 'this agent ships with the gateway',
  no_suite: 'no evaluation suite applies',
  evaluation_running: 'an evaluation of this version is running',
  invalid_draft: 'the endpoint’s answer makes no valid listing',
  endpoint_refused: 'the endpoint’s address is refused',
  endpoint_unreachable: 'the endpoint could not be reached',
  endpoint_failed: 'the endpoint answered with an error',
  endpoint_not_json: 'the endpoint did not answer with JSON',
  endpoint_too_large: 'the endpoint’s answer is too large',
  credential_unusable: 'the endpoint credential cannot be read',
  credentials_unavailable: 'this gateway cannot keep endpoint credentials',
  payment_required: 'this must be paid for first',
  payment_invalid: 'the payment was not accepted',
  payment_replayed: 'this payment was used already',
  payment_failed: 'the payment could not be collected',
  payment_unsupported: 'this agent cannot be paid per call',
  payments_off: 'this gateway takes no payments from outside',
  no_question: 'the call is not waiting for an answer',
  question_mismatch: 'that question was answered already',
  file_too_large: 'the file is too large',
  file_quota_exceeded: 'your files take all the room you have',
  invalid_link: 'the link is not valid',
  link_expired: 'the link has expired',
  no_delivery: 'no such delivery',
  webhooks_unavailable: 'this gateway sends no webhooks',
  demo_unavailable: 'the demo is not available now',
  demo_not_available: 'this agent has no demo',
  busy: 'the gateway is busy: try again shortly',
  queue_unavailable: 'the gateway’s queue cannot be reached: try again shortly',
  database_unavailable: 'the database cannot be reached: try again shortly',
  gateway_error: 'the gateway failed on its side',
};

/** What to do when a draft's endpoint was refused (POST /v0/agents/draft, 422): said after the gateway's message. */
export const DRAFT_ADVICE = {
  endpoint_refused: 'Use a public https address.',
  endpoint_unreachable: 'Check the address, and that the server is up.',
  endpoint_failed: 'Check that it accepts this example input.',
  endpoint_not_json: 'It must answer with a JSON body (in n8n: a “Respond to Webhook” node).',
  endpoint_too_large: '',
  credential_unusable: 'Set the endpoint credential again below.',
};

/** Why GitHub's sign-in came back refused (`#login_error=<reason>`, shared/accounts/github-sign-in.ts SignInError). */
export const SIGN_IN_ERRORS = {
  denied: 'You did not authorise Holon on GitHub.',
  invalid_state: 'The sign-in link is unknown, used, expired or from another browser. Sign in again from this page.',
  github_unavailable: 'GitHub could not be reached or refused the sign-in. Try again in a moment.',
  no_verified_email: 'Your GitHub account has no verified primary email. Verify one on GitHub, then sign in again.',
  email_unavailable: 'The account with your email is linked to another GitHub account.',
  handle_unavailable: 'Your GitHub login cannot be used as a Holon handle (taken or reserved).',
  account_disabled: 'This account is disabled.',
};

/**
 * The words for a code of one of the lists above, or undefined.
 * @param {Readonly<Record<string, string>>} list
 * @param {string | null | undefined} code
 */
export const wordsFor = (list, code) => (code && Object.hasOwn(list, code) ? list[code] : undefined);
