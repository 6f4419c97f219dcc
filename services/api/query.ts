/**
 * Reading query parameters: each bad one is a 400 `invalid_request` whose message names the parameter and whose
 * problem is at `query.<name>`. A parameter given twice (`?a=1&a=2`, which the simple query parser makes an array)
 * is refused like a malformed one. NUL characters never get here (app.ts refuses them in the URL).
 */
import type { Request } from 'express';
import { HolonError } from '../../shared/core/errors.js';
import { isAgentId } from '../../shared/core/identifiers.js';
import { parseTimestamp, type Instant } from '../../shared/core/timestamps.js';
import { RECEIPT_STATUSES, type ReceiptFilter, type ReceiptStatus } from '../../shared/receipts/store.js';
import semver from 'semver';

export function badQuery(name: string, message: string, problem: string = message): HolonError {
  return new HolonError('invalid_request', `${name} ${message}`, [{ path: `query.${name}`, message: problem }]);
}

/** The parameter's one value, or undefined; at most `max` characters. */
export function queryString(req: Request, name: string, max: number): string | undefined {
  const v = req.query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badQuery(name, 'must be given once');
  if (v.length > max) throw badQuery(name, `must be at most ${max} characters`);
  return v;
}

/** An RFC 3339 timestamp with a time zone (shared/core/timestamps.ts). */
function queryInstant(req: Request, name: string): Instant | undefined {
  const v = queryString(req, name, 100);
  if (v === undefined) return undefined;
  const parsed = parseTimestamp(v);
  if (!parsed.ok) throw badQuery(name, `must be an RFC 3339 timestamp with a time zone, such as 2026-03-01T00:00:00Z: ${parsed.message}`, parsed.message);
  return parsed.instant;
}

/** `since` (inclusive) and `until` (exclusive); `until` may not be before `since` (equal: an empty period). */
export function queryPeriod(req: Request): { since?: Instant; until?: Instant } {
  const since = queryInstant(req, 'since');
  const until = queryInstant(req, 'until');
  if (since && until && until.micros < since.micros) throw badQuery('until', `must not be before since (${since.iso})`);
  return { ...(since ? { since } : {}), ...(until ? { until } : {}) };
}

export function queryStatus(req: Request): ReceiptStatus | undefined {
  const v = queryString(req, 'status', 100);
  if (v === undefined) return undefined;
  if (!(RECEIPT_STATUSES as readonly string[]).includes(v)) throw badQuery('status', `must be one of ${RECEIPT_STATUSES.join(', ')}`);
  return v as ReceiptStatus;
}

/** `ns/name` (every version) or `ns/name@version` (an exact semantic version). */
export function queryAgent(req: Request): ReceiptFilter['agent'] {
  const v = queryString(req, 'agent', 200);
  if (v === undefined) return undefined;
  const at = v.indexOf('@');
  const id = at < 0 ? v : v.slice(0, at);
  const version = at < 0 ? undefined : v.slice(at + 1);
  if (!isAgentId(id) || (version !== undefined && semver.valid(version) !== version)) {
    throw badQuery('agent', 'must be an agent id ns/name, or ns/name@version with an exact version such as 1.0.0');
  }
  return version === undefined ? { id } : { id, version };
}
