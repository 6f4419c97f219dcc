/**
 * A failure to reach the database, told apart from every other error: the connection refused, reset or cut, the
 * server shutting down or terminating the backend (SQLSTATE class 08, 57P01–57P03), no connection to be had from
 * the pool in time. Such a failure is the gateway's, and a passing one: the API answers `503 database_unavailable`
 * with `Retry-After` (services/api/app.ts), never `500`, and admission confirms a call it may have admitted
 * (shared/calls/submit/reserve.ts).
 */
import { HolonError } from '../core/errors.js';

/** Socket-level codes of a connection that could not be made or was lost. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** SQLSTATEs of a server that cannot serve this connection now: shutting down, terminated, starting, full. */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);

/** What node-postgres says (without a code) when the socket ends under a query or a client that lost it is used. */
const LOST_CONNECTION =
  /Connection terminated|Connection ended unexpectedly|Client has encountered a connection error|Client was closed and is not queryable|connection is closed/i;

interface ErrorLike {
  code?: unknown;
  name?: unknown;
  message?: unknown;
  cause?: unknown;
}

function unreachableHere(e: ErrorLike): boolean {
  const code = typeof e.code === 'string' ? e.code : '';
  if (NETWORK_CODES.has(code) || SERVER_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  // knex: no connection came free from the pool within acquireConnectionTimeout (the server is not answering).
  if (e.name === 'KnexTimeoutError') return true;
  return typeof e.message === 'string' && LOST_CONNECTION.test(e.message);
}

/** True when `err` (or an error it wraps, e.g. an AggregateError of a refused dual-stack connect) is a database unreachable. */
export function isDatabaseUnreachable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const e = err as ErrorLike & { errors?: unknown };
  if (unreachableHere(e)) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isDatabaseUnreachable(x, depth + 1))) return true;
  return isDatabaseUnreachable(e.cause, depth + 1);
}

/** A unique violation (SQLSTATE 23505) on the named constraint, e.g. a call id already taken. */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && e.constraint === constraint;
}

/** The answer to a request that met an unreachable database: nothing was charged, and it is worth trying again. */
export function databaseUnavailable(): HolonError {
  return new HolonError('database_unavailable', 'the database could not be reached; nothing was charged: try again shortly');
}
