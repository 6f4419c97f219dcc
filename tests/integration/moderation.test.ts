/**
 * Moderation (gateway.md §7): the admin key disables accounts (keys revoked at once in every API process, email
 * blocked, published agents yanked on request), yanks published versions (never shipped ones), lists accounts and
 * reads the moderation log, which is append-only. Yanks leave every process's registry through `agents-yanked`.
 */
import { describe, expect, test } from 'vitest';
import { checkReason, disableAccount, escapeLike, listAccounts, readLog, yankVersion } from '../../shared/publishing/moderation.js';
import { applyYanks, followYanks, parseYankMessage, startYankFollower, YANKS_CHANNEL } from '../../shared/publishing/yanks.js';
import { createRegistry, type Registry } from '../../shared/registry/registry.js';
import type { AgentVersion } from '../../shared/runtimes/types.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { buildManifest } from '../support/manifest-builder.js';
import { poll } from '../support/poll.js';
import { answeredWith } from '../support/answered-with.js';
import type { Schema, Answer } from '../support/http.js';

const ADMIN = 'a'.repeat(40);
const admin = { authorization: `Bearer ${ADMIN}` };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const HOSTED = {
  hosted: true,
  adminKey: ADMIN,
  rateLimits: {
    perAddressPerMin: 100_000,
    perAccountPerMin: 100_000,
    signupsPerHour: 1000,
    publishesPerHour: 1000,
    draftsPerHour: 1000,
    evaluationsPerHour: 1000,
  },
};

const hosted = async () => startTestGateway({ config: HOSTED });

async function get(url: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}${path}`, { headers });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body };
}

async function signupAs(g: TestGateway, handle: string, email = `${handle}@example.org`): Promise<{ human: string; agent: string }> {
  const r = await g.post<Answer<'signUp', 201>>('/v0/signup', { handle, email });
  if (r.status !== 201) throw new Error(`sign-up refused: ${JSON.stringify(r.body)}`);
  return { human: r.body.keys.human.key, agent: r.body.keys.agent.key };
}

function published(id: string, version: string): AgentVersion {
  return { manifest: buildManifest({ id, version, summary: `Scrapes things (${id})`, capabilities: ['text.scrape'] }), origin: 'published' };
}

/** The gateway's shipped agents plus `mallory/scraper` 1.0.0 and 1.1.0, published. */
function registryWithPublished(g: TestGateway): Registry {
  return createRegistry([
    ...g.gw.context.registry.list().filter((a) => a.origin === 'shipped'),
    published('mallory/scraper', '1.0.0'),
    published('mallory/scraper', '1.1.0'),
    published('bob/helper', '1.0.0'),
  ]);
}

/** Waits of this test: up to 5 s, every 20 ms. */
const SOON = { timeoutMs: 5_000, intervalMs: 20 };

const version = (r: ReturnType<Registry['resolve']>) => (r.ok ? r.agent.manifest.version : r.code);

describe('disabling an account', () => {
  test('every key is refused at once by every API process, the email cannot sign up again, others are unaffected', async () => {
    await useAudited(await hosted(), async (g) => {
      const mallory = await signupAs(g, 'mallory');
      const bob = await signupAs(g, 'bob');
      // A second API process on the same database and Redis: what another replica behind the load balancer sees.
      const other = await startTestGateway({ beside: g, roles: ['api'], config: HOSTED });
      try {
        for (const url of [g.url, other.url]) {
          expect((await get(url, '/v0/me', bearer(mallory.human))).status).toBe(200);
          expect((await get(url, '/v0/me', bearer(mallory.agent))).status).toBe(200);
        }

        const r = await g.post<Answer<'disableAccount', 200>>('/v0/admin/accounts/mallory/disable', { reason: 'phishing through the sandbox mandate' }, admin);
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({
          account: { handle: 'mallory', email: 'mallory@example.org', state: 'disabled', disabled_reason: 'phishing through the sandbox mandate' },
          keys_revoked: 2,
          email_blocked: true,
          yanked: [],
        });
        expect(Date.parse(r.body.account.disabled_at)).not.toBeNaN();

        // No cache: refused at once, here and on the other process.
        for (const url of [g.url, other.url]) {
          for (const key of [mallory.human, mallory.agent]) {
            const me = await get(url, '/v0/me', bearer(key));
            expect(me.status).toBe(401);
            expect(me.body.error.code).toBe('unauthorized');
          }
          expect((await get(url, '/v0/me', bearer(bob.human))).status).toBe(200);
          expect((await get(url, '/v0/me', bearer(bob.agent))).status).toBe(200);
        }
        const keys = await g.db.knex('api_keys').where({ account: 'mallory' }).select('revoked_at');
        expect(keys).toHaveLength(2);
        expect(keys.every((k) => k.revoked_at !== null)).toBe(true);
        expect(await g.db.knex('api_keys').where({ account: 'bob' }).whereNull('revoked_at').count('* as n').first()).toMatchObject({ n: 2n });

        // The email is blocked, under any case or with spaces; a fresh email still signs up.
        for (const email of ['mallory@example.org', '  Mallory@Example.ORG ']) {
          const again = await g.post<Schema<'Error'>>('/v0/signup', { handle: 'mallory2', email });
          expect(again.status).toBe(403);
          expect(again.body.error.code).toBe('email_blocked');
        }
        expect((await g.post('/v0/signup', { handle: 'mallory2', email: 'someone-else@example.org' })).status).toBe(201);

        // Once only; unknown and non-user accounts are refused.
        const twice = await g.post<Schema<'Error'>>('/v0/admin/accounts/mallory/disable', { reason: 'again' }, admin);
        expect(twice.status).toBe(409);
        expect(twice.body.error.code).toBe('already_disabled');
        expect((await g.post('/v0/admin/accounts/nobody-here/disable', { reason: 'x' }, admin)).status).toBe(404);
        for (const handle of ['holon', 'external:demo-credit']) {
          const refused = await g.post<Schema<'Error'>>(`/v0/admin/accounts/${encodeURIComponent(handle)}/disable`, { reason: 'x' }, admin);
          expect(refused.status).toBe(400);
          expect(refused.body.error.code).toBe('not_a_user_account');
        }

        // The listing shows the state; the other process answers the same.
        const listed = await get(other.url, '/v0/admin/accounts', admin);
        expect(listed.status).toBe(200);
        const byHandle = Object.fromEntries(listed.body.accounts.map((a: any) => [a.handle, a]));
        expect(byHandle.mallory).toMatchObject({
          state: 'disabled',
          disabled_reason: 'phishing through the sandbox mandate',
          live_keys: 0,
          email: 'mallory@example.org',
        });
        expect(byHandle.bob).toMatchObject({ state: 'active', disabled_at: null, disabled_reason: null, live_keys: 2 });
        expect(byHandle.bob.balances).toEqual([{ currency: 'EUR', balance: '5.00', held: '0.00', available: '5.00' }]);
        expect(listed.body.accounts.map((a: any) => a.handle)).toEqual(['mallory2', 'bob', 'mallory']);
        expect(byHandle.holon).toBeUndefined();

        // One log row, with the reason and what was done.
        const log = await get(g.url, '/v0/admin/log', admin);
        expect(log.body.entries).toHaveLength(1);
        expect(log.body.entries[0]).toMatchObject({
          action: 'disable_account',
          target: 'mallory',
          reason: 'phishing through the sandbox mandate',
          detail: { keys_revoked: 2, email_blocked: true, yanked: [] },
        });
        expect(log.body.entries[0].id).toBe(r.body.log_id);
      } finally {
        await other.stop();
      }
    });
  });

  test('the transaction is all or nothing: a refused disable changes nothing', async () => {
    await useAudited(await hosted(), async (g) => {
      const mallory = await signupAs(g, 'mallory');
      const ctx = g.gw.context;
      await expect(disableAccount(ctx, 'mallory', { reason: '' })).rejects.toSatisfy(answeredWith(400));
      await expect(disableAccount(ctx, 'mallory', { reason: 'x'.repeat(1001) })).rejects.toSatisfy(answeredWith(400));
      await expect(disableAccount(ctx, 'mallory', { reason: 'a\u0000b' })).rejects.toSatisfy(answeredWith(400));
      // A failure inside the transaction (here: the log row, the last write) rolls everything back.
      await g.db.knex.raw(`ALTER TABLE moderation_log ADD CONSTRAINT test_refuse CHECK (target <> 'mallory')`);
      await expect(disableAccount(ctx, 'mallory', { reason: 'spam' })).rejects.toThrow(/test_refuse/);
      await g.db.knex.raw(`ALTER TABLE moderation_log DROP CONSTRAINT test_refuse`);
      expect((await get(g.url, '/v0/me', bearer(mallory.human))).status).toBe(200);
      expect(await g.db.knex('blocked_emails').count('* as n').first()).toMatchObject({ n: 0n });
      expect(await g.db.knex('accounts').where({ handle: 'mallory' }).first('disabled_at')).toMatchObject({ disabled_at: null });
      // And then it works.
      const done = await disableAccount(ctx, 'mallory', { reason: 'spam' });
      expect(done.keys_revoked).toBe(2);
      expect((await get(g.url, '/v0/me', bearer(mallory.human))).status).toBe(401);
    });
  });
});

describe('only the admin key moderates', () => {
  test('human, agent, unknown and missing keys are refused on every admin route', async () => {
    await useAudited(await hosted(), async (g) => {
      const bob = await signupAs(g, 'bob');
      const routes: Array<{ method: 'GET' | 'POST'; path: string; body?: unknown }> = [
        { method: 'POST', path: '/v0/admin/accounts/bob/disable', body: { reason: 'x' } },
        { method: 'POST', path: '/v0/admin/agents/examples/echo-upper@1.0.0/yank', body: { reason: 'x' } },
        { method: 'GET', path: '/v0/admin/accounts' },
        { method: 'GET', path: '/v0/admin/accounts?q=bob' },
        { method: 'GET', path: '/v0/admin/log' },
      ];
      const send = (route: (typeof routes)[number], headers: Record<string, string>) =>
        route.method === 'POST' ? g.post(route.path, route.body, headers) : get(g.url, route.path, headers);
      for (const route of routes) {
        for (const key of [bob.human, bob.agent]) {
          const r = await send(route, bearer(key));
          expect(r.status, `${route.method} ${route.path}`).toBe(403);
          expect(r.body.error.code).toBe('forbidden');
        }
        expect((await send(route, {})).status, `${route.method} ${route.path} without a key`).toBe(401);
        expect((await send(route, bearer(`hlk_h_AAAAAAAA_${'B'.repeat(40)}`))).status).toBe(401);
        expect((await send(route, bearer('b'.repeat(40)))).status).toBe(401);
      }
      // Nothing happened.
      expect((await get(g.url, '/v0/me', bearer(bob.human))).status).toBe(200);
      expect(await g.db.knex('moderation_log').count('* as n').first()).toMatchObject({ n: 0n });
      expect(await g.db.knex('yanked_versions').count('* as n').first()).toMatchObject({ n: 0n });
    });
  });
});

describe('yanking versions', () => {
  test('shipped agents are not moderated this way; unknown versions are 404', async () => {
    await useAudited(await hosted(), async (g) => {
      const shipped = await g.post<Schema<'Error'>>('/v0/admin/agents/examples/echo-upper@1.0.0/yank', { reason: 'dangerous' }, admin);
      expect(shipped.status).toBe(409);
      expect(shipped.body.error.code).toBe('shipped_agent');
      expect(shipped.body.error.message).toContain('they change with the code');
      for (const path of ['/v0/admin/agents/examples/echo-upper@9.9.9/yank', '/v0/admin/agents/nobody/here@1.0.0/yank']) {
        const r = await g.post<Schema<'Error'>>(path, { reason: 'x' }, admin);
        expect(r.status, path).toBe(404);
        expect(r.body.error.code).toBe('not_found');
      }
      // Malformed paths do not reach the route.
      expect((await g.post('/v0/admin/agents/examples/echo-upper/yank', { reason: 'x' }, admin)).status).toBe(404);
      expect(g.gw.context.registry.resolve('examples/echo-upper').ok).toBe(true);
      await expect(yankVersion(g.gw.context, 'examples/echo-upper', '1.0.0', { reason: 'x' })).rejects.toSatisfy(answeredWith(409, 'shipped_agent'));
      expect(await g.db.knex('moderation_log').count('* as n').first()).toMatchObject({ n: 0n });
    });
  });

  test('a published version leaves resolution and search here, on a registry following the channel, and at start-up', async () => {
    await useAudited(await hosted(), async (g) => {
      await signupAs(g, 'mallory');
      // A second API process on the same database and Redis: what another replica behind the load balancer sees.
      const other = await startTestGateway({ beside: g, roles: ['api'], config: HOSTED });
      let unfollow: (() => Promise<void>) | undefined;
      try {
        // This process lists published agents (swapped into its context: the routes read it from there).
        g.gw.context.registry = registryWithPublished(g);
        const here = g.gw.context.registry;
        // Another process, with its own registry and its own Redis connection, follows the channel.
        const there = registryWithPublished(g);
        unfollow = await followYanks({ ...other.gw.context, registry: there });
        expect(version(here.resolve('mallory/scraper'))).toBe('1.1.0');
        expect((await get(g.url, '/v0/agents/mallory/scraper')).body.version).toBe('1.1.0');

        const r = await g.post('/v0/admin/agents/mallory/scraper@1.1.0/yank', { reason: 'exfiltrates inputs' }, admin);
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ agent: 'mallory/scraper', version: '1.1.0', reason: 'exfiltrates inputs', yanked_by: 'admin', announced: true });

        // Here, at once.
        expect(version(here.resolve('mallory/scraper'))).toBe('1.0.0');
        expect(version(here.resolve('mallory/scraper@1.1.0'))).toBe('no_matching_version');
        expect(here.search({ q: 'scrape' }).map((a) => `${a.manifest.id}@${a.manifest.version}`)).toEqual(['bob/helper@1.0.0', 'mallory/scraper@1.0.0']);
        expect(here.versions('mallory/scraper').map((a) => a.manifest.version)).toEqual(['1.0.0']);
        expect((await get(g.url, '/v0/agents/mallory/scraper@1.1.0')).status).toBe(404);
        expect((await get(g.url, '/v0/agents/mallory/scraper')).body.version).toBe('1.0.0');
        const catalogue = await get(g.url, '/v0/agents?q=scrape');
        expect(catalogue.body.agents.map((a: any) => `${a.id}@${a.version}`)).toEqual(['bob/helper@1.0.0', 'mallory/scraper@1.0.0']);
        // There, through Redis.
        await poll(() => version(there.resolve('mallory/scraper')) === '1.0.0', { what: 'the other registry to hide 1.1.0', ...SOON });
        expect(there.search({ q: 'scrape' }).map((a) => a.manifest.version)).toEqual(['1.0.0', '1.0.0']);

        // Once.
        const twice = await g.post<Schema<'Error'>>('/v0/admin/agents/mallory/scraper@1.1.0/yank', { reason: 'again' }, admin);
        expect(twice.status).toBe(409);
        expect(twice.body.error.code).toBe('already_yanked');

        // Disabling with yank_agents withdraws the rest of the namespace, not other namespaces nor shipped agents.
        const disabled = await g.post('/v0/admin/accounts/mallory/disable', { reason: 'repeat offender', yank_agents: true }, admin);
        expect(disabled.status).toBe(200);
        expect(disabled.body).toMatchObject({ yanked: ['mallory/scraper@1.0.0'], keys_revoked: 2, announced: true });
        expect(version(here.resolve('mallory/scraper'))).toBe('unknown_agent');
        expect(version(here.resolve('bob/helper'))).toBe('1.0.0');
        expect(version(here.resolve('examples/echo-upper'))).toBe('1.0.0');
        await poll(() => version(there.resolve('mallory/scraper')) === 'unknown_agent', { what: 'the other registry to forget mallory/scraper', ...SOON });
        expect(version(there.resolve('bob/helper'))).toBe('1.0.0');
        // Exact lookups still work: calls admitted before the yank run and settle.
        expect(here.get('mallory/scraper', '1.1.0')?.manifest.version).toBe('1.1.0');

        const rows = await g.db.knex('yanked_versions').orderBy('version').select('agent_id', 'version', 'reason', 'yanked_by');
        expect(rows).toEqual([
          { agent_id: 'mallory/scraper', version: '1.0.0', reason: 'repeat offender', yanked_by: 'admin' },
          { agent_id: 'mallory/scraper', version: '1.1.0', reason: 'exfiltrates inputs', yanked_by: 'admin' },
        ]);

        // A process starting now reads the table; one that was already subscribed hears later yanks too.
        const fresh = registryWithPublished(g);
        const stop = await startYankFollower({ ...other.gw.context, registry: fresh });
        try {
          expect(version(fresh.resolve('mallory/scraper'))).toBe('unknown_agent');
          expect(version(fresh.resolve('bob/helper'))).toBe('1.0.0');
          await yankVersion(g.gw.context, 'bob/helper', '1.0.0', { reason: 'broken endpoint' });
          await poll(() => version(fresh.resolve('bob/helper')) === 'unknown_agent', { what: 'the started follower to hide bob/helper', ...SOON });
        } finally {
          await stop();
        }
        expect(await applyYanks(g.db.knex, registryWithPublished(g))).toBe(3);
        expect(await applyYanks(g.db.knex, fresh)).toBe(0);

        // A malformed message is ignored.
        await g.gw.context.messaging.notifier.publish(YANKS_CHANNEL, 'not a yank');
        await g.gw.context.messaging.notifier.publish(YANKS_CHANNEL, 'examples/echo-upper@9.9.9');
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(there.list().length).toBe(g.gw.context.registry.list().length);
      } finally {
        await unfollow?.();
        await other.stop();
      }
    });
  });

  test('yank messages', () => {
    expect(parseYankMessage('acme/pdf@1.2.3-beta.1+build.5')).toEqual({ id: 'acme/pdf', version: '1.2.3-beta.1+build.5' });
    for (const bad of ['acme/pdf', 'acme@1.0.0', 'a/b/c@1', 'acme/pdf@1@2', 'acme/pdf@', ' acme/pdf@1.0.0', 'x'.repeat(400)]) {
      expect(parseYankMessage(bad), bad).toBeNull();
    }
  });
});

describe('the moderation log and the account list', () => {
  test('every action with its reason, newest first, paged; Postgres refuses to change it', async () => {
    await useAudited(await hosted(), async (g) => {
      await signupAs(g, 'mallory');
      await signupAs(g, 'eve');
      g.gw.context.registry = registryWithPublished(g);
      const actions = [
        () => g.post('/v0/admin/agents/mallory/scraper@1.0.0/yank', { reason: 'first' }, admin),
        () => g.post('/v0/admin/accounts/eve/disable', { reason: 'second' }, admin),
        () => g.post('/v0/admin/agents/bob/helper@1.0.0/yank', { reason: 'third' }, admin),
        () => g.post('/v0/admin/accounts/mallory/disable', { reason: 'fourth', yank_agents: true }, admin),
      ];
      for (const act of actions) expect((await act()).status).toBe(200);

      const all = await get(g.url, '/v0/admin/log', admin);
      expect(all.status).toBe(200);
      expect(all.body.entries.map((e: any) => [e.action, e.target, e.reason])).toEqual([
        ['disable_account', 'mallory', 'fourth'],
        ['yank_version', 'bob/helper@1.0.0', 'third'],
        ['disable_account', 'eve', 'second'],
        ['yank_version', 'mallory/scraper@1.0.0', 'first'],
      ]);
      expect(all.body.entries[0].detail).toEqual({ keys_revoked: 2, email_blocked: true, yanked: ['mallory/scraper@1.1.0'] });
      expect(all.body.next_before).toBeNull();

      // Paging by id.
      const seen: string[] = [];
      let before: string | null = null;
      do {
        const page: { status: number; body: any } = await get(g.url, `/v0/admin/log?limit=3${before ? `&before=${before}` : ''}`, admin);
        expect(page.status).toBe(200);
        seen.push(...page.body.entries.map((e: any) => e.reason));
        before = page.body.next_before;
      } while (before);
      expect(seen).toEqual(['fourth', 'third', 'second', 'first']);
      expect((await readLog(g.db.knex, { limit: 10, before: all.body.entries[1].id })).entries.map((e) => e.reason)).toEqual(['second', 'first']);

      // Append-only.
      await expect(g.db.knex('moderation_log').update({ reason: 'nothing happened' })).rejects.toThrow(/append-only/);
      await expect(g.db.knex('moderation_log').where({ target: 'eve' }).delete()).rejects.toThrow(/append-only/);
      await expect(g.db.knex.raw('TRUNCATE moderation_log')).rejects.toThrow(/append-only/);
      expect(await g.db.knex('moderation_log').count('* as n').first()).toMatchObject({ n: 4n });
    });
  });

  test('accounts: q matches handle or email, case-insensitively and literally (% and _ are not wildcards)', async () => {
    await useAudited(await hosted(), async (g) => {
      await signupAs(g, 'ann', 'x_y@example.org');
      await signupAs(g, 'ben', 'xay@example.org');
      await signupAs(g, 'cat', 'p%q@example.org');
      await signupAs(g, 'dan', 'bang!e@example.org');
      await signupAs(g, 'x-y', 'dee@Example.org');
      const handles = async (query: string) => {
        const r = await get(g.url, `/v0/admin/accounts${query}`, admin);
        expect(r.status, query).toBe(200);
        return r.body.accounts.map((a: any) => a.handle);
      };
      expect(await handles('')).toEqual(['x-y', 'dan', 'cat', 'ben', 'ann']);
      expect(await handles('?q=x_y')).toEqual(['ann']);
      expect(await handles('?q=X_Y%40EXAMPLE')).toEqual(['ann']);
      expect(await handles('?q=%25')).toEqual(['cat']);
      expect(await handles('?q=!')).toEqual(['dan']);
      expect(await handles('?q=x-y')).toEqual(['x-y']);
      expect(await handles('?q=BEN')).toEqual(['ben']);
      expect(await handles('?q=example.org&limit=2')).toEqual(['x-y', 'dan']);
      expect(await handles('?q=nobody')).toEqual([]);
      expect(await handles('?q=')).toHaveLength(5);
      expect(escapeLike('a%b_c!d')).toBe('a!%b!_c!!d');
      expect((await listAccounts(g.db.knex, '_', 10)).map((a) => a.handle)).toEqual(['ann']);
      expect((await listAccounts(g.db.knex, undefined, 10)).every((a) => a.live_keys === 2 && a.state === 'active')).toBe(true);
    });
  });
});

describe('bad requests', () => {
  test('a reason is required, non-empty, at most 1000 characters, without NUL; unknown fields are refused', async () => {
    await useAudited(await hosted(), async (g) => {
      const bob = await signupAs(g, 'bob');
      g.gw.context.registry = registryWithPublished(g);
      const bodies: unknown[] = [
        {},
        { reason: '' },
        { reason: '   ' },
        { reason: 42 },
        { reason: null },
        { reason: 'x'.repeat(1001) },
        { reason: 'a\u0000b' },
        { reason: 'ok', extra: 1 },
        { 'rea\u0000son': 'ok' },
        [],
        'just a string',
      ];
      for (const path of ['/v0/admin/accounts/bob/disable', '/v0/admin/agents/bob/helper@1.0.0/yank']) {
        for (const body of bodies) {
          const r = await g.post<Schema<'Error'>>(path, body, admin);
          expect(r.status, `${path} ${JSON.stringify(body)}`).toBe(400);
          expect(['invalid_request', 'invalid_json']).toContain(r.body.error.code);
        }
        expect((await g.post(path, '{"reason":', admin)).status).toBe(400);
      }
      for (const yank_agents of ['yes', 1, null]) {
        expect((await g.post('/v0/admin/accounts/bob/disable', { reason: 'x', yank_agents }, admin)).status).toBe(400);
      }
      for (const query of [
        '/v0/admin/log?limit=0',
        '/v0/admin/log?limit=abc',
        '/v0/admin/log?limit=201',
        '/v0/admin/log?before=abc',
        '/v0/admin/log?before=-1',
        '/v0/admin/accounts?limit=1.5',
        `/v0/admin/accounts?q=${'x'.repeat(101)}`,
        '/v0/admin/accounts?q=a&q=b',
        '/v0/admin/accounts?q=%00',
      ]) {
        expect((await get(g.url, query, admin)).status, query).toBe(400);
      }
      // Nothing was done; a reason of exactly 1000 characters is fine.
      expect((await get(g.url, '/v0/me', bearer(bob.human))).status).toBe(200);
      expect(await g.db.knex('moderation_log').count('* as n').first()).toMatchObject({ n: 0n });
      expect((await g.post('/v0/admin/agents/bob/helper@1.0.0/yank', { reason: 'y'.repeat(1000) }, admin)).status).toBe(200);
      expect(() => checkReason(undefined)).toThrow(/reason/);
    });
  });
});
