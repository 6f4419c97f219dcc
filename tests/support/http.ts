/**
 * Requests to a gateway over HTTP, for tests and for the scripts that seed a gateway outside vitest (nothing here
 * imports vitest): a request with a key, JSON both ways; an email sign-up; the admin key the test gateways use.
 */

import { checkAnswer } from './response-check.js';

export const ADMIN_KEY = 'admin-key-for-tests-0123456789-abcdefghij';

/** Rate limits no test of many requests runs into (hosted gateways count every request). */
export const GENEROUS_RATE_LIMITS = {
  rateLimits: { perAddressPerMin: 100_000, perAccountPerMin: 100_000, signupsPerHour: 100, publishesPerHour: 30, draftsPerHour: 60, evaluationsPerHour: 10 },
};

/** A query string of the defined parameters: `query({a: '1', b: undefined})` → `?a=1`, `''` when none. */
export const query = (params: Record<string, string | undefined>) => {
  const s = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString();
  return s ? `?${s}` : '';
};

export interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

export async function send(
  base: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const res = await fetch(base + path, {
    method,
    headers: {
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  let isJson = false;
  try {
    body = JSON.parse(text);
    isJson = (res.headers.get('content-type') ?? '').includes('json');
  } catch {
    /* not JSON */
  }
  await checkAnswer(base, method, path, res.status, body, isJson);
  return { status: res.status, body, headers: res.headers };
}

export interface Account {
  handle: string;
  human: string;
  /** The starter sandbox's agent key (ask_in_client). */
  sandboxAgent: string;
}

export async function signUp(base: string, handle: string, headers: Record<string, string> = {}): Promise<Account> {
  const r = await send(base, 'POST', '/v0/signup', { body: { handle, email: `${handle}@example.test` }, headers });
  if (r.status !== 201) throw new Error(`sign-up of ${handle} failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { handle, human: r.body.keys.human.key, sandboxAgent: r.body.keys.agent.key };
}
