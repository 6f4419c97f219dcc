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

/**
 * One of a call's events (GET /v0/calls/{id}/events): its id, its name, its data.
 * @typedef {{ id: number, event: string, data: any }} CallEvent
 */

/**
 * Follow a call's events (Server-Sent Events, read with fetch: the key goes as a Bearer header, which EventSource
 * cannot send), each handed to `onEvent` once, in order; a cut connection is resumed with Last-Event-ID. Resolves with
 * the `completed` event, or undefined when `signal` fires first. A refusal (404: not yours) is an ApiError.
 * @param {string} id
 * @param {(e: CallEvent) => void} onEvent
 * @param {AbortSignal} signal
 * @returns {Promise<CallEvent | undefined>}
 */
export async function followEvents(id, onEvent, signal) {
  let after = 0;
  for (let cuts = 0; cuts <= 5 && !signal.aborted; cuts++) {
    const k = key();
    /** @type {Record<string, string>} */
    const headers = { accept: 'text/event-stream', ...(after ? { 'last-event-id': String(after) } : {}) };
    if (k) headers.authorization = `Bearer ${k}`;
    let response;
    try {
      response = await fetch(`/v0/calls/${encodeURIComponent(id)}/events`, { headers, credentials: 'omit', cache: 'no-store', signal });
    } catch {
      if (signal.aborted) return undefined;
      continue;
    }
    if (!response.ok || !response.body) throw new ApiError(response.status, await response.json().catch(() => null));
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut = buffer.indexOf('\n\n');
        while (cut >= 0) {
          const e = sseEvent(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          cut = buffer.indexOf('\n\n');
          if (!e) continue;
          after = e.id;
          cuts = 0;
          onEvent(e);
          if (e.event === 'completed') return e;
        }
      }
    } catch {
      if (signal.aborted) return undefined;
    }
  }
  return undefined;
}

/**
 * One Server-Sent Event's block (`id:`, `event:`, `data:` lines; `:` comments skipped), or null for a comment only.
 * @param {string} block
 * @returns {CallEvent | null}
 */
function sseEvent(block) {
  let id = 0;
  let event = 'message';
  const data = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('id:')) id = Number(line.slice(3).trim());
    else if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  return data.length ? { id, event, data: JSON.parse(data.join('\n')) } : null;
}
