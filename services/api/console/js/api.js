// The console's one way to the gateway: the same /v0 API as every client, the key as a Bearer header, no cookie.
// A refused key (401) signs the person out with a plain sentence; every other failure is an ApiError with the
// API's own code, message and per-field problems.

import { forget, key } from './session.js';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message || `the gateway answered ${status}`);
    this.status = status;
    this.code = body?.error?.code ?? 'error';
    this.problems = body?.error?.problems ?? body?.error?.details ?? [];
    this.body = body;
  }
}

export class SignedOut extends Error {}

/** Fetch JSON: api('GET', '/v0/me'), api('POST', '/v0/keys', {mandate}). Returns { status, body, headers }. */
export async function request(method, path, body, options = {}) {
  const headers = { accept: options.accept ?? 'application/json', ...(options.headers ?? {}) };
  const k = options.key ?? key();
  if (k) headers.authorization = `Bearer ${k}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
    });
  } catch {
    throw new ApiError(0, { error: { code: 'unreachable', message: 'The gateway could not be reached. Check your connection and try again.' } });
  }
  if (options.raw) {
    if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
    return response;
  }
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (response.status === 401 && !options.key) {
    forget('Your key has expired or was revoked. Sign in again to go on.');
    window.dispatchEvent(new Event('holon:signed-out'));
    throw new SignedOut('signed out');
  }
  if (!response.ok && !(options.accept202 && response.status === 202) && !options.any) throw new ApiError(response.status, parsed);
  return { status: response.status, body: parsed, headers: response.headers };
}

export const get = async (path, options) => (await request('GET', path, undefined, options)).body;
export const post = async (path, body = {}, options) => (await request('POST', path, body, options)).body;

/** A query string of the defined values: qs({a: 1, b: undefined}) → "?a=1". */
export function qs(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
