/**
 * GET /v0/catalog (public, paginated: declared and measured per agent) and GET /v0/me/agents (the author's
 * versions and earnings, computed from the journal: shared/catalogue/earnings.ts).
 *
 * bob publishes bob/echo 1.0.0 and 1.1.0 (proprietary, data policy declared); carol forks bob/echo@1.0.0 (royalty
 * 0.5), dave forks carol/echo@1.0.0 (royalty 0.5). alice calls every one of them; bob calls carol's fork too, so
 * bob is a payer (his debit is not an earning) and earns a royalty on the same call.
 */
import { expect, test } from 'vitest';
import type { ServiceContext } from '../../shared/context.js';
import { earningsCommand } from '../../services/cli/earnings.js';
import { validateManifest } from '../../shared/core/manifest/validate.js';
import { recordPublished } from '../../shared/registry/published.js';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { ADMIN_KEY, send, signUp, workMandate, type Reply, type Schema } from '../support/hosted.js';
import { startWebhookAgent } from '../support/published-servers.js';

const SECRET = 'catalog-earnings-file-secret-0123456789abcdef';

async function publishVersion(ctx: ServiceContext, author: string, doc: Record<string, unknown>) {
  const v = validateManifest(
    {
      version: '1.0.0',
      summary: `${String(doc.id)}: echoes its input`,
      capabilities: ['text.echo'],
      license: 'proprietary',
      interface: { input: { type: 'object' }, output: { type: 'object' } },
      pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
      data: { retention: 'none', region: ['eu'], training: false },
      ...doc,
    },
    { resolveUpstream: (id, version) => ctx.registry.get(id, version)?.manifest ?? null },
  );
  if (!v.ok) throw new Error(`invalid test manifest: ${JSON.stringify(v.problems)}`);
  expect(await recordPublished(ctx, { manifest: v.manifest, author })).toBe('listed');
}

/** Σ of an account's lines in settle entries, per currency, micro-units: positive ones only, or all. */
async function settleLines(knex: any, account: string, positiveOnly: boolean): Promise<Record<string, bigint>> {
  const q = knex('journal_lines as l')
    .join('journal_entries as e', 'e.id', 'l.entry_id')
    .where({ 'e.kind': 'settle', 'l.account': account })
    .groupBy('l.currency')
    .select('l.currency', knex.raw('sum(l.amount)::text AS amount'));
  const rows = (await (positiveOnly ? q.andWhere('l.amount', '>', 0) : q)) as Array<{ currency: string; amount: string }>;
  return Object.fromEntries(rows.map((r) => [r.currency, BigInt(r.amount)]));
}

const micros = (amount: string): bigint => {
  const [whole, frac = ''] = amount.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
};

test('the catalogue pages every agent with declared and measured figures; earnings equal the journal exactly', async () => {
  const agent = await startWebhookAgent({ tls: false });
  const endpoint = `http://127.0.0.1:${agent.port}/run`;
  const runtime = { kind: 'webhook', endpoint, limits: { timeout_s: 10 } };
  await useAudited(await startTestGateway({ hosted: true, config: { allowPrivateEndpoints: true, fileSecret: SECRET } }), async (g) => {
    try {
      const ctx = g.gw.context;
      const [alice, bob, carol, dave] = [await signUp(g.url, 'alice'), await signUp(g.url, 'bob'), await signUp(g.url, 'carol'), await signUp(g.url, 'dave')];
      await publishVersion(ctx, 'bob', { id: 'bob/echo', runtime });
      await publishVersion(ctx, 'bob', { id: 'bob/echo', version: '1.1.0', runtime });
      await publishVersion(ctx, 'carol', { id: 'carol/echo', runtime, license: 'MIT', lineage: { forked_from: 'bob/echo@1.0.0', royalty: '0.5' } });
      await publishVersion(ctx, 'dave', { id: 'dave/echo', runtime, lineage: { forked_from: 'carol/echo@1.0.0', royalty: '0.5' } });

      const aliceWork = await workMandate(g.url, alice, { allow: { agents: ['bob/*', 'carol/*', 'dave/*'], capabilities: ['text.*'] } });
      const bobWork = await workMandate(g.url, bob, { allow: { agents: ['carol/*'], capabilities: ['text.*'] } });
      const call = async (key: string, name: string) => {
        const r = await send(g.url, 'POST', '/v0/calls', { key, body: { agent: name, input: { n: 1 } } });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body.receipt;
      };
      expect((await call(aliceWork.agent, 'bob/echo')).agent).toBe('bob/echo@1.1.0');
      expect((await call(aliceWork.agent, 'bob/echo@1.0.0')).agent).toBe('bob/echo@1.0.0');
      await call(aliceWork.agent, 'carol/echo');
      const bobPaid = await call(bobWork.agent, 'carol/echo');
      await call(aliceWork.agent, 'dave/echo');
      // bob's key for bob/echo; then 1.1.0 is yanked: no longer listed, its earnings stay.
      expect((await send(g.url, 'PUT', '/v0/agents/bob/echo/credential', { key: bob.human, body: { token: 'secret-token-1' } })).status).toBe(200);
      expect((await send(g.url, 'POST', '/v0/admin/agents/bob/echo@1.1.0/yank', { key: ADMIN_KEY, body: { reason: 'test' } })).status).toBe(200);

      // ---- GET /v0/me/agents: who may see it
      expect((await send(g.url, 'GET', '/v0/me/agents')).status).toBe(401);
      expect((await send(g.url, 'GET', '/v0/me/agents', { key: aliceWork.agent })).status).toBe(403);

      const me = await send(g.url, 'GET', '/v0/me/agents', { key: bob.human });
      expect(me.status, JSON.stringify(me.body)).toBe(200);
      const byVersion = Object.fromEntries((me.body.versions as any[]).map((v) => [`${v.agent}@${v.version}`, v]));
      expect(Object.keys(byVersion).sort()).toEqual(['bob/echo@1.0.0', 'bob/echo@1.1.0']);
      expect(byVersion['bob/echo@1.0.0']).toMatchObject({
        listed: true,
        proprietary: true,
        credential: { set: true },
        evaluation: { status: 'none' },
        // alice's call; royalties: carol's fork called by alice (0.0045) and dave's fork of carol's (0.00225). The
        // royalty on the call bob paid for is netted by the journal against his payment (below): not an earning.
        earnings: { paid_calls: 1, fork_calls: 2, share: { EUR: '0.009' }, royalties: { EUR: '0.00675' }, total: { EUR: '0.01575' } },
      });
      expect(byVersion['bob/echo@1.1.0']).toMatchObject({
        listed: false,
        yanked_at: expect.any(String),
        earnings: { paid_calls: 1, fork_calls: 0, share: { EUR: '0.009' }, royalties: {}, total: { EUR: '0.009' } },
      });
      expect(me.body.totals).toEqual({ share: { EUR: '0.018' }, royalties: { EUR: '0.00675' }, unattributed: {}, total: { EUR: '0.02475' } });

      // The definition, against the journal itself: Σ over versions (share + royalties) = Σ of bob's positive
      // lines in settle entries, exactly; bob's debit as a payer is not an earning.
      for (const author of [bob, carol, dave]) {
        const view = author === bob ? me.body : (await send(g.url, 'GET', '/v0/me/agents', { key: author.human })).body;
        const summed: Record<string, bigint> = {};
        for (const v of view.versions as any[])
          for (const part of ['share', 'royalties'])
            for (const [c, a] of Object.entries(v.earnings[part] as Record<string, string>)) summed[c] = (summed[c] ?? 0n) + micros(a);
        const journal = await settleLines(g.db.knex, author.handle, true);
        expect(summed, author.handle).toEqual(journal);
        expect(Object.fromEntries(Object.entries(view.totals.total as Record<string, string>).map(([c, a]) => [c, micros(a)]))).toEqual(journal);
        expect(Object.fromEntries(Object.entries(view.journal_total as Record<string, string>).map(([c, a]) => [c, micros(a)]))).toEqual(journal);
      }
      expect(await settleLines(g.db.knex, 'bob', true)).toEqual({ EUR: 24_750n });
      // The journal merges an entry's lines per account: bob's call to carol's fork is one line, −0.01 + 0.0045.
      const netted = await g.db
        .knex('journal_lines as l')
        .join('journal_entries as e', 'e.id', 'l.entry_id')
        .where({ 'e.key': `settle:${bobPaid.id}`, 'l.account': 'bob' })
        .pluck('l.amount');
      expect(netted.map(String)).toEqual(['-5500']);
      expect(await settleLines(g.db.knex, 'bob', false)).toEqual({ EUR: 24_750n - 5_500n });
      // `holon earnings`: the same answer, as JSON or as text.
      let printed = '';
      const out = { write: (t: string) => (printed += t) };
      expect(await earningsCommand(['--json'], { HOLON_URL: g.url, HOLON_KEY: bob.human }, out)).toBe(0);
      expect(JSON.parse(printed)).toEqual(me.body);
      printed = '';
      expect(await earningsCommand(['--url', g.url, '--key', bob.human], {}, out)).toBe(0);
      expect(printed).toContain('bob/echo@1.1.0  yanked, credential set');
      expect(printed).toContain('total 0.02475 EUR (share 0.018 EUR, royalties 0.00675 EUR)');
      expect(await earningsCommand([], { HOLON_URL: g.url, HOLON_KEY: aliceWork.agent }, out)).toBe(1);
      expect(await earningsCommand([], {}, out)).toBe(2);
      const carolView = (await send(g.url, 'GET', '/v0/me/agents', { key: carol.human })).body;
      expect(carolView.versions[0]).toMatchObject({
        agent: 'carol/echo',
        proprietary: false,
        credential: { set: false },
        earnings: { paid_calls: 2, fork_calls: 1, share: { EUR: '0.009' }, royalties: { EUR: '0.00225' } },
      });

      // ---- GET /v0/catalog: no key, every listed agent once, in pages
      expect((await send(g.url, 'GET', '/v0/catalog?limit=0')).status).toBe(400);
      expect((await send(g.url, 'GET', '/v0/catalog?limit=101')).status).toBe(400);
      const seen: any[] = [];
      let cursor: string | null = '';
      let pages = 0;
      while (cursor !== null) {
        const page: Reply<Schema<'CatalogPage'>> = await send(g.url, 'GET', `/v0/catalog?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(page.status, JSON.stringify(page.body)).toBe(200);
        expect(page.body.agents.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.agents);
        cursor = page.body.next_cursor;
        expect(page.body.total).toBe(ctx.registry.search({}).length);
        pages++;
      }
      const ids = seen.map((a) => a.id);
      expect(ids).toEqual([...new Set(ids)].sort());
      expect(ids).toEqual(ctx.registry.search({}).map((a) => a.manifest.id));
      expect(pages).toBe(Math.ceil(ids.length / 2));
      const entry = (id: string) => seen.find((a) => a.id === id);
      const bobEcho = entry('bob/echo');
      expect(bobEcho).toMatchObject({
        latest_version: '1.0.0',
        version: '1.0.0',
        summary: 'bob/echo: echoes its input',
        capabilities: ['text.echo'],
        license: 'proprietary',
        proprietary: true,
        origin: 'published',
        pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
        data: { attested: true, retention: 'none', region: ['eu'], training: false },
        runtime: { kind: 'webhook', attested: true },
        evaluation: { status: 'none', suites: [] },
      });
      expect(bobEcho.versions.map((v: any) => v.version)).toEqual(['1.0.0']);
      expect(bobEcho.versions[0].record).toMatchObject({ runs: 1, successes: 1 });
      // The agent as a whole counts the yanked version's run too.
      const all = bobEcho.measured.all_time;
      expect(all).toMatchObject({ runs: 2, successes: 2, success_rate: 1, currency: 'EUR', billed_total: '0.02', cost_per_successful_run: '0.01' });
      expect(all.latency_ms.p50).toEqual(expect.any(Number));
      expect(all.latency_ms.p95).toEqual(expect.any(Number));
      expect(entry('carol/echo')).toMatchObject({ proprietary: false, license: 'MIT', measured: { all_time: { runs: 2, successes: 2 } } });
      expect(entry('dave/echo')).toMatchObject({ proprietary: true, measured: { all_time: { runs: 1 } } });
    } finally {
      await agent.close();
    }
  });
});

test('dev mode: the catalogue is served, /v0/me/agents is not (no authors without accounts)', async () => {
  await useAudited(await startTestGateway(), async (g) => {
    const page = await send(g.url, 'GET', '/v0/catalog?limit=1');
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ limit: 1, total: g.gw.context.registry.search({}).length });
    expect(page.body.agents).toHaveLength(1);
    expect((await send(g.url, 'GET', '/v0/me/agents')).status).toBe(404);
  });
});
