/**
 * Hosted-mode test helpers: a hosted gateway (keys, principals), a second API process on the same database and
 * Redis, sign-ups, and requests made with a key.
 */
import type { RunningGateway } from '../../services/compose.js';
import type { Config } from '../../shared/platform/config.js';
import { startBeside, startTestGateway, type TestGateway } from './gateway.js';

import { ADMIN_KEY, send, type Account } from './http.js';

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

export { ADMIN_KEY, send, signUp, type Account, type Reply } from './http.js';

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
