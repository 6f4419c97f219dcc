/**
 * The marketplace as a stranger meets it, end to end, across two API processes on one Postgres and one Redis:
 * an author signs in with GitHub (the redirect flow against the fake GitHub), sets an endpoint credential before
 * publishing, publishes an open-source webhook agent and an MCP agent with POST /v0/agents; a caller (email
 * sign-up) calls them through the second API process, by name and by capability (allow.published); a third account
 * (GitHub) publishes a fork with a royalty through the second process; the author's earnings equal the journal; the
 * author yanks a version and the second process stops listing it; the catalogue shows the fork's measured runs; the
 * ledger audit passes (useAudited).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from 'vitest';
import type { Config } from '../../shared/platform/config.js';
import { startFakeGitHub } from '../support/fake-github.js';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { signInWithGitHub } from '../support/github-accounts.js';
import { send, signUp, workMandate, type Account, type Reply, type Schema } from '../support/hosted.js';
import { startMcpAgent } from '../support/published-servers.js';
import { poll } from '../support/poll.js';

const SECRET = 'stranger-journey-file-secret-0123456789abcdef';
const TOKEN = 'journey-token.0123456789-abcdef';

/** A webhook agent on 127.0.0.1 answering `{echo: <input>}`, recording the Authorization header of every request. */
async function recordingWebhook(): Promise<{ url: string; seen: Array<{ path: string; authorization: string | null }>; close(): Promise<void> }> {
  const seen: Array<{ path: string; authorization: string | null }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization ?? null });
      res.setHeader('connection', 'close');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An open-source manifest (MIT, source.repository on GitHub) for a remote runtime. */
function manifest(id: string, runtime: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    version: '1.0.0',
    summary: `${id}: echoes its input`,
    capabilities: ['text.echo'],
    license: 'MIT',
    source: { repository: `https://github.com/${id}` },
    interface: { input: { type: 'object' }, output: { type: 'object' } },
    pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
    runtime: { limits: { timeout_s: 10 }, ...runtime },
    ...extra,
  };
}

/** Every agent of GET /v0/catalog on `base`, walked page by page. */
async function wholeCatalog(base: string): Promise<any[]> {
  const agents: any[] = [];
  let cursor: string | null = '';
  while (cursor !== null) {
    const page: Reply<Schema<'CatalogPage'>> = await send(base, 'GET', `/v0/catalog?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    agents.push(...page.body.agents);
    cursor = page.body.next_cursor;
  }
  return agents;
}

const micros = (amount: string): bigint => {
  const [whole, frac = ''] = amount.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
};

test('a stranger signs in with GitHub, publishes, is called through another process, forked, paid, yanked', { timeout: 90_000 }, async () => {
  const github = await startFakeGitHub();
  const hook = await recordingWebhook();
  const mcp = await startMcpAgent({ tls: false });
  const settings: Partial<Config> = { ...github.config, githubTimeoutMs: 2_000, allowPrivateEndpoints: true, fileSecret: SECRET };
  try {
    await useAudited(await startTestGateway({ hosted: true, config: settings }), async (g) => {
      const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true, config: settings });
      try {
        // 1. The author signs in with GitHub (the redirect flow) and gets a human key; the account is linked.
        const author = await signInWithGitHub(g.url, github, 'Adaline', 4242);
        expect(author.handle).toBe('adaline');
        expect(author.human).toEqual(expect.any(String));
        expect(await g.db.knex('accounts').where({ handle: 'adaline' }).first('github_id', 'github_login')).toMatchObject({
          github_id: expect.anything(),
          github_login: 'Adaline',
        });
        github.addRepository({ owner: 'Adaline', name: 'echo' });
        github.addRepository({ owner: 'Adaline', name: 'tool' });

        // 2. A credential for adaline/echo before anything is published.
        const cred = await send(g.url, 'PUT', '/v0/agents/adaline/echo/credential', { key: author.human, body: { token: TOKEN } });
        expect(cred.status, JSON.stringify(cred.body)).toBe(200);
        expect(cred.body).toMatchObject({ agent: 'adaline/echo', credential: { set: true } });
        expect(JSON.stringify(cred.body)).not.toContain(TOKEN);

        // 3. Publishes a webhook agent and an MCP agent, open source, from repositories GitHub says the author owns.
        const echo = manifest('adaline/echo', { kind: 'webhook', endpoint: `${hook.url}/echo` });
        const published = await send(g.url, 'POST', '/v0/agents', { key: author.human, body: echo });
        expect(published.status, JSON.stringify(published.body)).toBe(201);
        expect(published.body).toEqual({
          agent: 'adaline/echo',
          version: '1.0.0',
          author: 'adaline',
          license: 'MIT',
          source: { repository: 'Adaline/echo' },
          listed: true,
          evaluation: { status: 'none', suites: [] },
        });
        const toolCred = await send(g.url, 'PUT', '/v0/agents/adaline/tool/credential', { key: author.human, body: { token: `${TOKEN}-mcp` } });
        expect(toolCred.status, JSON.stringify(toolCred.body)).toBe(200);
        const tool = manifest('adaline/tool', { kind: 'mcp', endpoint: `http://127.0.0.1:${mcp.port}/mcp`, tool: 'run' }, { capabilities: ['text.tool'] });
        const publishedTool = await send(g.url, 'POST', '/v0/agents', { key: author.human, body: tool });
        expect(publishedTool.status, JSON.stringify(publishedTool.body)).toBe(201);
        await poll(
          async () => {
            const [a, b] = await Promise.all([send(other.url, 'GET', '/v0/agents/adaline/echo'), send(other.url, 'GET', '/v0/agents/adaline/tool')]);
            return a.status === 200 && b.status === 200;
          },
          { what: 'both versions in the second process' },
        );

        // 4. A caller (email sign-up) calls it by name through the second process; the server saw the token.
        const caller: Account = await signUp(other.url, 'calvin');
        const work = await workMandate(other.url, caller, { allow: { agents: ['adaline/*', 'fernanda/*'], capabilities: ['text.*'] } });
        const byName = await send(other.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'adaline/echo', input: { n: 1 } } });
        expect(byName.status, JSON.stringify(byName.body)).toBe(200);
        expect(byName.body).toMatchObject({
          output: { echo: { n: 1 } },
          receipt: {
            agent: 'adaline/echo@1.0.0',
            billed: true,
            splits: [
              { to: 'holon', amount: '0.001' },
              { to: 'adaline', amount: '0.009' },
            ],
          },
        });
        expect(hook.seen).toEqual([{ path: '/echo', authorization: `Bearer ${TOKEN}` }]);
        const byTool = await send(other.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'adaline/tool', input: { n: 2 } } });
        expect(byTool.status, JSON.stringify(byTool.body)).toBe(200);
        expect(byTool.body).toMatchObject({ output: { echo: { n: 2 } }, receipt: { agent: 'adaline/tool@1.0.0', billed: true } });
        // Every request of the MCP exchange (initialize, the notification, tools/call) carried the MCP agent's own token.
        const posts = mcp.hits.filter((h) => h.method === 'POST' && h.path === '/mcp');
        expect(posts.length).toBeGreaterThanOrEqual(2);
        expect(new Set(mcp.hits.map((h) => h.authorization))).toEqual(new Set([`Bearer ${TOKEN}-mcp`]));

        // By capability: a published agent needs allow.published.
        const closed = await send(other.url, 'POST', '/v0/calls', { key: work.agent, body: { capability: 'text.echo', input: { n: 3 } } });
        expect(closed.status, JSON.stringify(closed.body)).toBe(403);
        const created = await send(other.url, 'POST', '/v0/mandates', {
          key: caller.human,
          body: {
            id: 'open',
            grantee: 'calvin/assistant',
            allow: { agents: ['adaline/*'], capabilities: ['text.*'], published: true },
            budget: { total: '1.00' },
          },
        });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        const openKey = await send(other.url, 'POST', '/v0/keys', { key: caller.human, body: { mandate: 'calvin/open' } });
        expect(openKey.status, JSON.stringify(openKey.body)).toBe(201);
        const byCapability = await send(other.url, 'POST', '/v0/calls', { key: openKey.body.key, body: { capability: 'text.echo', input: { n: 4 } } });
        expect(byCapability.status, JSON.stringify(byCapability.body)).toBe(200);
        expect(byCapability.body.receipt.agent).toBe('adaline/echo@1.0.0');
        expect(hook.seen.map((s) => s.authorization)).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);

        // 5. A third account (GitHub) publishes a fork with a royalty, through the second process; a call pays the author.
        const forker = await signInWithGitHub(other.url, github, 'fernanda', 4343);
        github.addRepository({ owner: 'fernanda', name: 'echo' });
        const fork = manifest(
          'fernanda/echo',
          { kind: 'webhook', endpoint: `${hook.url}/fork` },
          { lineage: { forked_from: 'adaline/echo@1.0.0', royalty: '0.5' } },
        );
        const forked = await send(other.url, 'POST', '/v0/agents', { key: forker.human, body: fork });
        expect(forked.status, JSON.stringify(forked.body)).toBe(201);
        await poll(async () => (await send(g.url, 'GET', '/v0/agents/fernanda/echo')).status === 200, { what: 'the fork in the first process' });
        const forkCall = await send(other.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'fernanda/echo', input: { n: 5 } } });
        expect(forkCall.status, JSON.stringify(forkCall.body)).toBe(200);
        expect(forkCall.body.receipt.agent).toBe('fernanda/echo@1.0.0');
        const splits = Object.fromEntries((forkCall.body.receipt.splits as Array<{ to: string; amount: string }>).map((s) => [s.to, s.amount]));
        expect(splits).toEqual({ holon: '0.001', fernanda: '0.0045', adaline: '0.0045' });
        // The fork's endpoint has no credential of its own: the author's token is not sent to it.
        expect(hook.seen.at(-1)).toEqual({ path: '/fork', authorization: null });

        // 6. The author's earnings equal the Σ of the author's positive lines in settle entries.
        const me = await send(other.url, 'GET', '/v0/me/agents', { key: author.human });
        expect(me.status, JSON.stringify(me.body)).toBe(200);
        const rows = (await g.db
          .knex('journal_lines as l')
          .join('journal_entries as e', 'e.id', 'l.entry_id')
          .where({ 'e.kind': 'settle', 'l.account': 'adaline' })
          .andWhere('l.amount', '>', 0)
          .groupBy('l.currency')
          .select('l.currency', g.db.knex.raw('sum(l.amount)::text AS amount'))) as Array<{ currency: string; amount: string }>;
        const journal = Object.fromEntries(rows.map((r) => [r.currency, BigInt(r.amount)]));
        // Two calls of echo and one of the tool (0.009 each) and the royalty on the fork's call (0.0045).
        expect(journal).toEqual({ EUR: 31_500n });
        const asMicros = (m: Record<string, string>) => Object.fromEntries(Object.entries(m).map(([c, a]) => [c, micros(a)]));
        expect(asMicros(me.body.totals.total)).toEqual(journal);
        expect(asMicros(me.body.journal_total)).toEqual(journal);
        const byVersion = Object.fromEntries((me.body.versions as any[]).map((v) => [`${v.agent}@${v.version}`, v]));
        expect(byVersion['adaline/echo@1.0.0']).toMatchObject({
          listed: true,
          credential: { set: true },
          earnings: { paid_calls: 2, fork_calls: 1, share: { EUR: '0.018' }, royalties: { EUR: '0.0045' } },
        });
        expect(byVersion['adaline/tool@1.0.0']).toMatchObject({ credential: { set: true }, earnings: { paid_calls: 1, share: { EUR: '0.009' } } });

        // 7. The author yanks echo; the second process stops listing it; the number stays taken.
        const yank = await send(g.url, 'DELETE', '/v0/agents/adaline/echo@1.0.0', { key: author.human });
        expect(yank.status, JSON.stringify(yank.body)).toBe(200);
        expect(yank.body).toMatchObject({ agent: 'adaline/echo', version: '1.0.0', yanked_by: 'adaline' });
        await poll(async () => (await send(other.url, 'GET', '/v0/agents/adaline/echo')).status === 404, { what: 'the yank in the second process' });
        expect((await wholeCatalog(other.url)).map((a) => a.id)).not.toContain('adaline/echo');
        const afterYank = await send(other.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'adaline/echo', input: {} } });
        expect(afterYank.status).toBe(404);
        const again = await send(other.url, 'POST', '/v0/agents', { key: author.human, body: echo });
        expect(again.status, JSON.stringify(again.body)).toBe(409);
        expect(again.body.error).toMatchObject({ code: 'version_taken', problems: [{ path: '$.version' }] });

        // 8. The catalogue (of either process) lists the fork with its measured runs.
        for (const base of [g.url, other.url]) {
          const entry = (await wholeCatalog(base)).find((a) => a.id === 'fernanda/echo');
          expect(entry, base).toMatchObject({
            latest_version: '1.0.0',
            license: 'MIT',
            proprietary: false,
            origin: 'published',
            measured: { all_time: { runs: 1, successes: 1, success_rate: 1, billed_total: '0.01', currency: 'EUR' } },
          });
          expect(entry.versions.map((v: any) => v.version)).toEqual(['1.0.0']);
        }
      } finally {
        await other.stop();
      }
    });
    // 9. useAudited ran the ledger audit.
  } finally {
    await mcp.close();
    await hook.close();
    await github.close();
  }
});
