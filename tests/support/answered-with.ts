/**
 * A thrown HolonError as the API would answer it: its HTTP status (services/api/http-status.ts, the one map from
 * code to status) and, when given, its code. For `expect(promise).rejects.toSatisfy(answeredWith(409, 'yanked'))`.
 */
import { httpStatusOf } from '../../services/api/http-status.js';
import { HolonError } from '../../shared/core/errors.js';

export function answeredWith(status: number, code?: string): (e: unknown) => boolean {
  return (e) => e instanceof HolonError && httpStatusOf(e.code) === status && (code === undefined || e.code === code);
}
