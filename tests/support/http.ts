/**
 * Requests to a gateway over HTTP, for tests and for the scripts that seed a gateway outside vitest (nothing here
 * imports vitest): a request with a key, JSON both ways; an email sign-up; the admin key the test gateways use.
 *
 * A request says what it expects the answer to be, with the OpenAPI document's own types (client/openapi.d.ts):
 *
 *   const r = await send<Schema<'CallSucceeded'>>(g.url, 'POST', '/v0/calls', { key, body });
 *   r.body.receipt.cost.total; // typed
 *   const me = await send<Answer<'signUp', 201>>(g.url, 'POST', '/v0/signup', { body }); // an operation's own answer
 *
 * Whatever the type says, every JSON answer is also checked against the document at run time (response-check.ts).
 */

import type { components, operations } from '../../client/openapi.js';
import { checkAnswer } from './response-check.js';

/** An object of the gateway's OpenAPI document: `Schema<'Receipt'>`, `Schema<'MandateView'>`, `Schema<'Error'>`… */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

/** The JSON body an operation of the document answers with a status: `Answer<'signUp', 201>`, `Answer<'getCall', 200>`. */
export type Answer<Op extends keyof operations, Status extends keyof operations[Op]['responses']> = operations[Op]['responses'][Status] extends {
  content: { 'application/json': infer B };
}
  ? B
  : never;

/** A refusal that carries its receipt (a denied call, a rejected input): the Error answer, with the receipt the test reads. */
export type RefusalWithReceipt = Schema<'Error'> & { receipt: Schema<'Receipt'> };

/** A bad request's refusal (400, 422): the Error answer with every problem, each with its path. */
export type RefusalWithProblems = Schema<'Error'> & { error: { problems: Array<Schema<'Problem'>> } };

/** A call's success whose output is `Output` (the agent's own, which the document leaves open). */
export type Succeeded<Output> = Omit<Schema<'CallSucceeded'>, 'output'> & { output: Output };

/** A call that ran, whichever way it ended (200 or 502): both answers carry the receipt. */
export type CallRan = Schema<'CallSucceeded'> | Schema<'CallFailed'>;

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

/**
 * An answer: its status, its body (parsed JSON, else the text) and headers. `T` is what the caller expects the body to
 * be; a call site that does not say gets `any`, as the body was typed before `T` existed, so that tests not converted
 * yet keep compiling (`send<unknown>` asks the compiler to make the test check it first).
 */
export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** One request as the gateway's clients send it (JSON body, Bearer key), answered as fetch answers it. */
export function request(
  base: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(base + path, {
    method,
    headers: {
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) } : {}),
  });
}

export async function send<T = any>(
  base: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const res = await request(base, method, path, options);
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
  return { status: res.status, body: body as T, headers: res.headers };
}

export interface Account {
  handle: string;
  human: string;
  /** The starter sandbox's agent key (ask_in_client). */
  sandboxAgent: string;
}

export async function signUp(base: string, handle: string, headers: Record<string, string> = {}): Promise<Account> {
  const r = await send<Answer<'signUp', 201>>(base, 'POST', '/v0/signup', { body: { handle, email: `${handle}@example.test` }, headers });
  if (r.status !== 201) throw new Error(`sign-up of ${handle} failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { handle, human: r.body.keys.human.key, sandboxAgent: r.body.keys.agent.key };
}
