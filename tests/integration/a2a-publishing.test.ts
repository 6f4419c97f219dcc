/**
 * Publishing an a2a agent (docs/a2a-agents.md, shared/publishing/a2a-card.ts) on a hosted gateway with the fake
 * GitHub and allowPrivateEndpoints (the A2A SDK's servers on 127.0.0.1): the card is fetched, checked and kept with
 * the version, and the version is called on the kept card even after the agent serves another; a forged signature
 * and an interface at another origin refuse the publish (422). Real Postgres and Redis; the books audited.
 */
import { generateKeyPairSync } from 'node:crypto';
import { generateAgentCardSignature, type AgentCard } from '@a2a-js/sdk';
import { beforeEach, expect, test } from 'vitest';
import type { Config } from '../../shared/platform/config.js';
import { startFakeGitHub, type FakeGitHub } from '../support/fake-github.js';
import { signInWithGitHub } from '../support/github-accounts.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { send, signUp, workMandate, type Account } from '../support/hosted.js';
import { perTestCleanups } from '../support/cleanups.js';
import { createRegistry } from '../../shared/registry/registry.js';
import { startPublishedFollower } from '../../shared/registry/published.js';
import { completes, startA2aAgent, type A2aAgentOptions } from '../support/a2a-agents.js';

const { defer } = perTestCleanups();
let github: FakeGitHub;
beforeEach(async () => {
  github = await startFakeGitHub();
  return () => github.close();
});

const withGitHub = (): Partial<Config> => ({ ...github.config, githubTimeoutMs: 400, allowPrivateEndpoints: true });

async function agentServer(options: A2aAgentOptions = {}) {
  const a = await startA2aAgent(completes, options);
  defer(() => a.close());
  return a;
}

function manifest(id: string, endpoint: string): Record<string, unknown> {
  return {
    id,
    version: '1.0.0',
    summary: `${id}, an A2A agent published for a test`,
    capabilities: ['text.echo'],
    license: 'proprietary',
    interface: { input: { type: 'object' }, output: { type: 'object' } },
    pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
    runtime: { kind: 'a2a', endpoint, skill: 'summarise', limits: { timeout_s: 10 } },
  };
}

const publish = (g: TestGateway, a: Account, body: unknown) => send(g.url, 'POST', '/v0/agents', { key: a.human, body });

test('an a2a version is listed with its card kept; called on the kept card after the agent changed its card', async () => {
  await useAudited(await startTestGateway({ hosted: true, config: withGitHub() }), async (g) => {
    const a = await agentServer();
    const bob = await signInWithGitHub(g.url, github, 'bob', 1001);
    const r = await publish(g, bob, manifest('bob/a2a-echo', a.url));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const row = await g.db.knex('published_versions').where({ agent_id: 'bob/a2a-echo' }).first('a2a_card');
    expect(row.a2a_card).toMatchObject({ name: 'Test agent', skills: [{ id: 'summarise' }] });
    // Another process lists it from Postgres with the same card.
    const registry = createRegistry([]);
    const unfollow = await startPublishedFollower({ ...g.gw.context, registry });
    expect(registry.get('bob/a2a-echo', '1.0.0')?.a2aCard).toEqual(row.a2a_card);
    await unfollow();
    // The catalogue shows what the kept card says of itself (the console's agent page renders it).
    const listed = await send(g.url, 'GET', '/v0/agents/bob/a2a-echo', {});
    expect(listed.body.runtime).toMatchObject({ kind: 'a2a', attested: true, a2a: { skill: 'summarise', card: { name: 'Test agent' } } });

    // The agent now serves a card pointing elsewhere: the published version still runs on the card it was listed with.
    a.changeCard((c) => ({ ...c, supportedInterfaces: [{ ...c.supportedInterfaces[0]!, url: 'http://127.0.0.2:9/a2a/jsonrpc' }] }));
    const alice = await signUp(g.url, 'alice');
    const work = await workMandate(g.url, alice, { allow: { agents: ['bob/*'], capabilities: ['text.*'] } });
    const call = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'bob/a2a-echo', input: { n: 1 } } });
    expect(call.status, JSON.stringify(call.body)).toBe(200);
    expect(call.body).toMatchObject({ output: { echo: { n: 1 } }, receipt: { agent: 'bob/a2a-echo@1.0.0', billed: true, cost: { own: '0.01' } } });
    expect(a.received).toHaveLength(1);
  });
});

test('a forged signature, or an interface at another origin, refuses the publish (422, nothing listed)', async () => {
  await useAudited(await startTestGateway({ hosted: true, config: withGitHub() }), async (g) => {
    const bob = await signInWithGitHub(g.url, github, 'bob', 1001);
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const forged = await agentServer({
      card: async (c: AgentCard) => ({
        ...(await generateAgentCardSignature(privateKey.export({ format: 'jwk' }) as never, { alg: 'ES256', kid: 'k1', typ: 'JOSE', jwk })(c)),
        description: 'changed after signing',
      }),
    });
    const elsewhere = await agentServer({
      card: (c) => ({ ...c, supportedInterfaces: [{ ...c.supportedInterfaces[0]!, url: 'https://elsewhere.example/a2a' }] }),
    });
    for (const [id, a, words] of [
      ['bob/forged', forged, 'no signature verifies'],
      ['bob/elsewhere', elsewhere, "not at the endpoint's origin"],
    ] as const) {
      const r = await publish(g, bob, manifest(id, a.url));
      expect(r.status, JSON.stringify(r.body)).toBe(422);
      expect(r.body.error).toMatchObject({ code: 'invalid_manifest', problems: [{ path: '$.runtime.endpoint', message: expect.stringContaining(words) }] });
    }
    expect(Number((await g.db.knex('published_versions').count<Array<{ n: string }>>('* as n'))[0]!.n)).toBe(0);
  });
});
