/**
 * What a failed webhook attempt says in the delivery log (`webhook_attempts.error`, GET /v0/calls/{id}/deliveries)
 * and the settler's log line: the receiver's host and port, and what happened, in words (connection refused, the
 * name did not resolve, TLS, timed out, closed early: shared/platform/net-errors.ts). Never the URL's path or query,
 * which may carry the receiver's token.
 */
import { guardRefusal } from '../platform/guarded-net.js';
import { classifyNetworkError, describeNetworkFailure } from '../platform/net-errors.js';

/** The longest error text kept for one attempt. */
const MAX_ATTEMPT_ERROR = 300;

/** The attempt's own bound fired (HOLON_WEBHOOK_TIMEOUT_MS). */
const ATTEMPT_TIMED_OUT = 'no answer within the attempt timeout';
/** No response headers in time (HOLON_WEBHOOK_FIRST_BYTE_TIMEOUT_MS): connected, then nothing. */
const FIRST_BYTE_TIMED_OUT = 'no answer within the first-byte timeout';

function hostOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.port ? u.host : `${u.host}:${u.protocol === 'https:' ? 443 : 80}`;
  } catch {
    return undefined;
  }
}

/** The `error` of an attempt to POST to `url` that ended with `e` instead of an answer. */
export function attemptError(e: unknown, url: string): string {
  const name = (e as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return ATTEMPT_TIMED_OUT;
  if ((e as { code?: unknown } | null)?.code === 'UND_ERR_HEADERS_TIMEOUT') return FIRST_BYTE_TIMED_OUT;
  const receiver = hostOf(url);
  const who = receiver ? `the receiver ${receiver}` : 'the receiver';
  const refused = guardRefusal(e);
  const text = refused ? `${who} was refused: ${refused.message}` : `${who}: ${describeNetworkFailure(classifyNetworkError(e))}`;
  return text.length > MAX_ATTEMPT_ERROR ? `${text.slice(0, MAX_ATTEMPT_ERROR - 1)}…` : text;
}
