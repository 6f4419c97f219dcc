/**
 * Hosted-mode test helpers: a hosted gateway (keys, principals), a second API process on the same database and
 * Redis, sign-ups, and requests made with a key.
 */
import type { RunningGateway } from '../../services/compose.js';
import type { Config } from '../../shared/platform/config.js';
import { startBeside, startTestGateway, type TestGateway } from './gateway.js';

export const ADMIN_KEY = 'admin-key-for-tests-0123456789-abcdefghij';

export function hostedConfig(extra: Partial<Config> = {}): Partial<Config> {
  return { hosted: true, adminKey: ADMIN_KEY, ...extra };
}

export function startHostedGateway(extra: Partial<Config> = {}) {
  return startTestGateway({ config: hostedConfig(extra) });
}

/** Another API process (own connections, own port) on the same database and Redis prefix. */
export async function secondApi(g: TestGateway, extra: Partial<Config> = {}): Promise<RunningGateway & { url: string }> {
  const gw = await startBeside(g, ['api'], hostedConfig(extra));
  return Object.assign(gw, { url: `http://127.0.0.1:${gw.port}` });
}

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
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
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

/** A root mandate of the account's own (examples and fixtures allowed) and an agent key for it. */
export async function workMandate(
  base: string,
  a: Account,
  doc: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<{ mandate: string; agent: string; prefix: string }> {
  const m = await send(base, 'POST', '/v0/mandates', {
    key: a.human,
    headers,
    body: {
      id: 'work',
      grantee: `${a.handle}/assistant`,
      allow: { agents: ['examples/*', 'fixtures/*'], capabilities: ['text.*', 'test.*'] },
      budget: { total: '3.00' },
      ...doc,
    },
  });
  if (m.status !== 201) throw new Error(`mandate refused: ${JSON.stringify(m.body)}`);
  // The key is for the mandate just made, whatever its id (`work` unless the doc says otherwise).
  const mandate = `${a.handle}/${typeof doc.id === 'string' ? doc.id : 'work'}`;
  const k = await send(base, 'POST', '/v0/keys', { key: a.human, body: { mandate }, headers });
  if (k.status !== 201) throw new Error(`key refused: ${JSON.stringify(k.body)}`);
  return { mandate, agent: k.body.key, prefix: k.body.prefix };
}
