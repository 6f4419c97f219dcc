/**
 * Publishing an a2a agent checks its card (shared/publishing/a2a-card.ts) against real A2A agents on 127.0.0.1:
 * a card signed with a key given by `jwk` or by `jku` is kept; a forged signature, a signature whose key cannot be
 * found, an interface at another origin, a missing skill, an unreachable card are refused.
 */
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateAgentCardSignature, type AgentCard } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { checkA2aCard } from '../../shared/publishing/a2a-card.js';
import { perTestCleanups } from '../support/cleanups.js';
import { completes, startA2aAgent, type A2aAgentOptions } from '../support/a2a-agents.js';

const { defer } = perTestCleanups();
const settings = { allowPrivate: true };

async function agentServer(options: A2aAgentOptions) {
  const a = await startA2aAgent(completes, options);
  defer(() => a.close());
  return a;
}

function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateJwk: privateKey.export({ format: 'jwk' }), publicJwk: { ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'ES256' } };
}

/** Sign the card (kid k1), with extra protected header parameters (`jwk` or `jku`). */
function signed(privateJwk: object, extra: Record<string, unknown>) {
  return (card: AgentCard) => generateAgentCardSignature(privateJwk as never, { alg: 'ES256', kid: 'k1', typ: 'JOSE', ...extra })(card);
}

async function jwksServer(keys: object[]) {
  const server = http.createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
}

describe('a2a card at publish', () => {
  it('keeps an unsigned card that fits: the card as served', async () => {
    const a = await agentServer({});
    const r = await checkA2aCard(a.url, 'summarise', settings);
    expect(r).toMatchObject({ card: { name: 'Test agent', skills: [{ id: 'summarise' }] } });
  });

  it('keeps a card whose signature verifies, with the key embedded (jwk) or named (jku)', async () => {
    const { privateJwk, publicJwk } = keyPair();
    const { kid: _kid, alg: _alg, ...bare } = publicJwk;
    const embedded = await agentServer({ card: signed(privateJwk, { jwk: bare }) });
    expect(await checkA2aCard(embedded.url, 'summarise', settings)).toHaveProperty('card.signatures');
    const jku = await jwksServer([publicJwk]);
    const named = await agentServer({ card: signed(privateJwk, { jku }) });
    expect(await checkA2aCard(named.url, 'summarise', settings)).toHaveProperty('card.signatures');
  });

  it('refuses a forged signature (the card changed after signing, or signed by another key)', async () => {
    const { privateJwk, publicJwk } = keyPair();
    const { kid: _kid, alg: _alg, ...bare } = publicJwk;
    const changed = await agentServer({ card: async (c) => ({ ...(await signed(privateJwk, { jwk: bare })(c)), description: 'changed after signing' }) });
    expect(await checkA2aCard(changed.url, 'summarise', settings)).toEqual({ problem: expect.stringContaining('no signature verifies') });
    const other = keyPair();
    const jku = await jwksServer([other.publicJwk]);
    const wrongKey = await agentServer({ card: signed(privateJwk, { jku }) });
    expect(await checkA2aCard(wrongKey.url, 'summarise', settings)).toEqual({ problem: expect.stringContaining('no signature verifies') });
    const noKey = await agentServer({ card: signed(privateJwk, {}) });
    expect(await checkA2aCard(noKey.url, 'summarise', settings)).toEqual({ problem: expect.stringContaining('no signature verifies') });
  });

  it('refuses a card whose interface is at another origin, one without the skill, one that cannot be fetched', async () => {
    const elsewhere = await agentServer({
      card: (c) => ({ ...c, supportedInterfaces: [{ ...c.supportedInterfaces[0]!, url: 'https://elsewhere.example/a2a' }] }),
    });
    expect(await checkA2aCard(elsewhere.url, 'summarise', settings)).toEqual({ problem: expect.stringContaining("not at the endpoint's origin") });
    const a = await agentServer({});
    expect(await checkA2aCard(a.url, 'translate', settings)).toEqual({ problem: expect.stringContaining('no skill "translate"') });
    expect(await checkA2aCard('http://127.0.0.1:9/.well-known/agent-card.json', 'summarise', settings)).toEqual({
      problem: expect.stringContaining('could not be fetched'),
    });
  });

  it('fetches through the guard: a private address is refused unless allowed', async () => {
    const a = await agentServer({});
    expect(await checkA2aCard(a.url, 'summarise', { allowPrivate: false })).toEqual({ problem: expect.stringContaining('could not be fetched') });
  });
});
