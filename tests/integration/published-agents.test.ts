/**
 * Published agents live in Postgres and reach every process's registry (shared/registry/published.ts): at once in the
 * process that records them, through the `agents-published` channel in the others, at start-up in a process started
 * later. Resolution, capability routing with `allow.published`, the Agent Record, splits and fork royalties work for
 * them as for shipped agents; a yank takes them out everywhere and their number stays taken.
 * (The publishing API itself — POST /v0/agents with its checks — builds on this.)
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from 'vitest';
import { validateManifest } from '../../shared/core/manifest/validate.js';
import { recordPublished } from '../../shared/registry/published.js';
import type { ServiceContext } from '../../shared/context.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { ADMIN_KEY, send, signUp, workMandate } from '../support/hosted.js';
import { poll } from '../support/poll.js';

async function echoServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ echoed: JSON.parse(body || 'null') }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`, server };
}

function manifest(id: string, endpoint: string, extra: Record<string, unknown> = {}, ctx?: ServiceContext) {
  const v = validateManifest(
    {
      id,
      version: '1.0.0',
      summary: `${id}, published for a test`,
      capabilities: ['text.echo'],
      license: 'proprietary',
      interface: { input: { type: 'object' }, output: { type: 'object' } },
      pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
      runtime: { kind: 'webhook', endpoint, limits: { timeout_s: 10 } },
      ...extra,
    },
    { resolveUpstream: (upId, version) => ctx?.registry.get(upId, version)?.manifest ?? null },
  );
  if (!v.ok) throw new Error(`invalid test manifest: ${JSON.stringify(v.problems)}`);
  return v.manifest;
}

const publish = (ctx: ServiceContext, m: ReturnType<typeof manifest>, author: string) => recordPublished(ctx, { manifest: m, author });

test('a published version is listed in every process, called by name and by capability, paid, yanked everywhere', async () => {
  const agent = await echoServer();
  await useAudited(await startTestGateway({ hosted: true, config: { allowPrivateEndpoints: true } }), async (g) => {
    const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true, config: { allowPrivateEndpoints: true } });
    let late: TestGateway | undefined;
    try {
      const bob = await signUp(g.url, 'bob');
      const alice = await signUp(g.url, 'alice');
      expect(bob.handle).toBe('bob');
      const echo = manifest('bob/echo', agent.url);
      expect(await publish(g.gw.context, echo, 'bob')).toBe('listed');
      // Here at once; in the other API process through the channel; the number is taken.
      expect(g.gw.context.registry.resolve('bob/echo').ok).toBe(true);
      await poll(() => other.gw.context.registry.resolve('bob/echo').ok, { what: 'bob/echo in the other process' });
      expect(await publish(other.gw.context, echo, 'bob')).toBe('version_taken');
      expect(await g.db.knex('published_versions').select('agent_id', 'version', 'author')).toEqual([
        { agent_id: 'bob/echo', version: '1.0.0', author: 'bob' },
      ]);
      // A process started later lists it from Postgres.
      late = await startTestGateway({ beside: g, roles: ['api'], hosted: true, config: { allowPrivateEndpoints: true } });
      expect(late.gw.context.registry.get('bob/echo', '1.0.0')?.origin).toBe('published');

      const work = await workMandate(g.url, alice, { allow: { agents: ['bob/*', 'carol/*'], capabilities: ['text.*'] } });
      const byName = await send(other.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'bob/echo', input: { n: 1 } } });
      expect(byName.status, JSON.stringify(byName.body)).toBe(200);
      expect(byName.body).toMatchObject({
        output: { echoed: { n: 1 } },
        receipt: {
          billed: true,
          splits: [
            { to: 'holon', amount: '0.001' },
            { to: 'bob', amount: '0.009' },
          ],
        },
      });
      // By capability a published agent needs allow.published.
      const closed = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { capability: 'text.echo', input: { n: 2 } } });
      expect(closed.status).toBe(403);
      const created = await send(g.url, 'POST', '/v0/mandates', {
        key: alice.human,
        body: { id: 'open', grantee: 'alice/assistant', allow: { agents: ['bob/*'], capabilities: ['text.*'], published: true }, budget: { total: '1.00' } },
      });
      expect(created.status).toBe(201);
      const openKey = await send(g.url, 'POST', '/v0/keys', { key: alice.human, body: { mandate: 'alice/open' } });
      const byCapability = await send(g.url, 'POST', '/v0/calls', { key: openKey.body.key, body: { capability: 'text.echo', input: { n: 3 } } });
      expect(byCapability.status, JSON.stringify(byCapability.body)).toBe(200);
      expect(byCapability.body.receipt.agent).toBe('bob/echo@1.0.0');

      // A fork published by a third account pays its royalty upstream.
      const carol = await signUp(g.url, 'carol');
      expect(carol.handle).toBe('carol');
      const fork = manifest('carol/echo', agent.url, { lineage: { forked_from: 'bob/echo@1.0.0', royalty: '0.5' } }, g.gw.context);
      expect(await publish(g.gw.context, fork, 'carol')).toBe('listed');
      await poll(() => other.gw.context.registry.resolve('carol/echo').ok, { what: 'carol/echo in the other process' });
      const forked = await send(other.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'carol/echo', input: {} } });
      expect(forked.status).toBe(200);
      const splits = Object.fromEntries((forked.body.receipt.splits as Array<{ to: string; amount: string }>).map((s) => [s.to, s.amount]));
      expect(splits).toEqual({ holon: '0.001', carol: '0.0045', bob: '0.0045' });

      // The Agent Record counts the published agent's runs.
      const record = await send(g.url, 'GET', '/v0/agents/bob/echo');
      expect(record.body.record).toMatchObject({ runs: 2, successes: 2 });

      // Yanked: gone from every process, the number stays taken, the fork still settles its royalties later.
      const yank = await send(g.url, 'POST', '/v0/admin/agents/bob/echo@1.0.0/yank', { key: ADMIN_KEY, body: { reason: 'test' } });
      expect(yank.status).toBe(200);
      await poll(() => !other.gw.context.registry.resolve('bob/echo').ok, { what: 'the yank in the other process' });
      expect(await publish(g.gw.context, echo, 'bob')).toBe('version_taken');
      const afterYank = await send(other.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'carol/echo', input: {} } });
      expect(afterYank.status).toBe(200);
    } finally {
      await late?.stop();
      await other.stop();
      agent.server.close();
    }
  });
});

test('two processes publishing the same version at once: exactly one wins', async () => {
  const agent = await echoServer();
  await useAudited(await startTestGateway({ hosted: true, config: { allowPrivateEndpoints: true } }), async (g) => {
    const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true, config: { allowPrivateEndpoints: true } });
    try {
      await signUp(g.url, 'dora');
      const m = manifest('dora/echo', agent.url);
      const results = await Promise.all([publish(g.gw.context, m, 'dora'), publish(other.gw.context, m, 'dora')]);
      expect(results.sort()).toEqual(['listed', 'version_taken']);
      expect(await g.db.knex('published_versions').where({ agent_id: 'dora/echo' }).pluck('version')).toEqual(['1.0.0']);
    } finally {
      await other.stop();
      agent.server.close();
    }
  });
});
