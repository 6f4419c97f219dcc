// @ts-check
// The console's one way to the gateway: the same /v0 API as every client, the key as a Bearer header, no cookie.
// A refused key (401) signs the person out with a plain sentence; every other failure is an ApiError with the
// API's own code, message and per-field problems.

import { REQUEST_ERRORS, wordsFor } from './error-words.js';
import { forget, key } from './session.js';

/**
 * @typedef {import('./api-types.js').ErrorBody} ErrorBody
 * @typedef {import('./api-types.js').Problem} Problem
 */

/**
 * How to ask: another key than the kept one (`key: ''` for none), headers, and which answers are not failures
 * (`any`: every status is returned; `accept202`).
 * @typedef {{ key?: string, accept?: string, headers?: Record<string, string>, any?: boolean, accept202?: boolean }} RequestOptions
 */

/**
 * An answer: its status, its JSON body (null when there is none), its headers.
 * @template [T=unknown]
 * @typedef {{ status: number, body: T, headers: Headers }} Answer
 */

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {unknown} body the answer's JSON body, the error shape when it is one
   */
  constructor(status, body) {
    const error = /** @type {{ error?: Partial<ErrorBody['error']> & { details?: Problem[] } } | null} */ (body)?.error;
    super(error?.message || wordsFor(REQUEST_ERRORS, error?.code) || `the gateway answered ${status}`);
    this.status = status;
    this.code = error?.code ?? 'error';
    /** @type {Problem[]} */
    this.problems = error?.problems ?? error?.details ?? [];
    this.body = body;
  }
}

export class SignedOut extends Error {}

/**
 * The fetch itself; a network failure is an ApiError `unreachable`.
 * @param {string} method
 * @param {string} path
 * @param {unknown} body
 * @param {RequestOptions} options
 */
async function send(method, path, body, options) {
  /** @type {Record<string, string>} */
  const headers = { accept: options.accept ?? 'application/json', ...(options.headers ?? {}) };
  const k = options.key ?? key();
  if (k) headers.authorization = `Bearer ${k}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    return await fetch(path, {
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
}

/**
 * Fetch JSON: request('GET', '/v0/me'), request('POST', '/v0/keys', {mandate}). Returns { status, body, headers }.
 * The body's type is the caller's to say (`@type {Answer<…>}`): the API's types are in api-types.d.ts.
 * @template [T=unknown]
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {RequestOptions} [options]
 * @returns {Promise<Answer<T>>}
 */
export async function request(method, path, body, options = {}) {
  const response = await send(method, path, body, options);
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

/**
 * A file (the CSV of a month): the answer itself, to read as a blob; a refusal is an ApiError.
 * @param {string} path
 * @param {string} accept
 */
export async function download(path, accept) {
  const response = await send('GET', path, undefined, { accept });
  if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
  return response;
}

/**
 * The body of a GET: its type is the caller's to say (`@type {import('./api-types.js').Me}`).
 * @template [T=unknown]
 * @param {string} path
 * @param {RequestOptions} [options]
 * @returns {Promise<T>}
 */
export const get = async (path, options) => /** @type {T} */ ((await request('GET', path, undefined, options)).body);

/**
 * The body of a POST's answer.
 * @template [T=unknown]
 * @param {string} path
 * @param {unknown} [body]
 * @param {RequestOptions} [options]
 * @returns {Promise<T>}
 */
export const post = async (path, body = {}, options) => /** @type {T} */ ((await request('POST', path, body, options)).body);

/**
 * A query string of the defined values: qs({a: 1, b: undefined}) → "?a=1".
 * @param {Record<string, string | number | null | undefined>} params
 */
export function qs(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
