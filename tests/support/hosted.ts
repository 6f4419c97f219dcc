/**
 * Hosted-mode test helpers: sign-ups, requests made with a key, and a mandate of an account's own with its agent key.
 * A hosted gateway is `startTestGateway({ hosted: true })` (gateway.ts); a second API process on its data is
 * `startTestGateway({ beside: g, roles: ['api'], hosted: true })`.
 */
import { send, type Account, type Schema } from './http.js';

export { hostedConfig } from './gateway.js';
export { ADMIN_KEY, send, signUp, type Account, type Reply, type Schema } from './http.js';

/** A root mandate of the account's own (examples and fixtures allowed) and an agent key for it. */
export async function workMandate(
  base: string,
  a: Account,
  doc: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<{ mandate: string; agent: string; prefix: string }> {
  const m = await send<Schema<'MandateView'>>(base, 'POST', '/v0/mandates', {
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
  const k = await send<Schema<'MintedKey'>>(base, 'POST', '/v0/keys', { key: a.human, body: { mandate }, headers });
  if (k.status !== 201) throw new Error(`key refused: ${JSON.stringify(k.body)}`);
  return { mandate, agent: k.body.key, prefix: k.body.prefix };
}
