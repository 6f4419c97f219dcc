/**
 * Codes in the domain, statuses at the edge: every error code of shared/core/errors.ts has its one HTTP status in
 * services/api/http-status.ts, and nothing under shared/ speaks HTTP statuses.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeOfHttpStatus, httpStatusOf } from '../../services/api/http-status.js';
import { ERROR_CODES } from '../../shared/core/errors.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('the map from code to HTTP status', () => {
  it('gives every code a 4xx or 5xx status', () => {
    for (const code of ERROR_CODES) expect(httpStatusOf(code), code).toBeGreaterThanOrEqual(400);
    for (const code of ERROR_CODES) expect(httpStatusOf(code), code).toBeLessThan(600);
  });

  it('keeps the statuses the API has always answered', () => {
    expect(
      Object.fromEntries(
        (
          [
            'invalid_request',
            'unauthorized',
            'insufficient_funds',
            'denied',
            'not_found',
            'approval_used',
            'body_too_large',
            'unsupported_media_type',
            'rejected_input',
            'rate_limited',
            'gateway_error',
            'github_error',
            'queue_unavailable',
          ] as const
        ).map((c) => [c, httpStatusOf(c)]),
      ),
    ).toEqual({
      invalid_request: 400,
      unauthorized: 401,
      insufficient_funds: 402,
      denied: 403,
      not_found: 404,
      approval_used: 409,
      body_too_large: 413,
      unsupported_media_type: 415,
      rejected_input: 422,
      rate_limited: 429,
      gateway_error: 500,
      github_error: 502,
      queue_unavailable: 503,
    });
  });

  it('names a body parser’s own 4xx by its status', () => {
    expect([413, 415, 400, 403].map(codeOfHttpStatus)).toEqual(['body_too_large', 'unsupported_media_type', 'bad_request', 'bad_request']);
  });

  it('is the only place statuses are chosen: shared/ has no httpStatus and no status in a HolonError', () => {
    const offenders = sources(path.join(ROOT, 'shared')).filter((f) => /httpStatus|new HolonError\(\s*'[a-z_]+',\s*\d{3}/.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => path.relative(ROOT, f))).toEqual([]);
  });
});
