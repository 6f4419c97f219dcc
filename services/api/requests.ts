/**
 * Reading request bodies: every problem listed with its path, unknown fields refused. What no body may hold (NUL,
 * lone surrogates, too deep) was refused before any route ran (bodies.ts).
 */
import { HolonError, type Problem } from '../../shared/core/errors.js';
import { tryParseAmount } from '../../shared/core/money.js';

export type Body = Record<string, unknown>;

export function requireObject(body: unknown): Body {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new HolonError('invalid_request', 400, 'the request body must be a JSON object');
  }
  return body as Body;
}

export class BodyReader {
  readonly problems: Problem[] = [];
  constructor(
    readonly body: Body,
    allowed: readonly string[],
  ) {
    for (const k of Object.keys(body)) {
      if (!allowed.includes(k)) this.problems.push({ path: `$.${k}`, message: 'is not a known field' });
    }
  }

  string(field: string, options: { required?: boolean; max?: number } = {}): string | undefined {
    const v = this.body[field];
    if (v === undefined) {
      if (options.required) this.problems.push({ path: `$.${field}`, message: 'is required' });
      return undefined;
    }
    if (typeof v !== 'string' || v === '') {
      this.problems.push({ path: `$.${field}`, message: 'must be a non-empty string' });
      return undefined;
    }
    if (v.length > (options.max ?? 1000)) {
      this.problems.push({ path: `$.${field}`, message: `must be at most ${options.max ?? 1000} characters` });
      return undefined;
    }
    return v;
  }

  amount(field: string, options: { required?: boolean; allowZero?: boolean } = {}): bigint | undefined {
    const v = this.body[field];
    if (v === undefined) {
      if (options.required) this.problems.push({ path: `$.${field}`, message: 'is required' });
      return undefined;
    }
    const r = tryParseAmount(v, { allowZero: options.allowZero ?? true });
    if (!r.ok) {
      this.problems.push({ path: `$.${field}`, message: r.message });
      return undefined;
    }
    return r.value;
  }

  url(field: string): string | undefined {
    const v = this.string(field, { max: 2000 });
    if (v === undefined) return undefined;
    try {
      const u = new URL(v);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      if (u.username || u.password) throw new Error('credentials');
      return u.toString();
    } catch {
      this.problems.push({ path: `$.${field}`, message: 'must be an absolute http(s) URL without credentials' });
      return undefined;
    }
  }

  /** Throw a 400 listing every problem, if any. */
  done(): void {
    if (this.problems.length) {
      throw new HolonError('invalid_request', 400, `the request has ${this.problems.length} problem${this.problems.length === 1 ? '' : 's'}`, this.problems);
    }
  }
}
