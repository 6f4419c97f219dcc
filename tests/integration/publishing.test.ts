/**
 * Publishing a version (gateway.md §7 "Publishing agents"): POST /v0/agents lists a version only when every
 * condition holds and otherwise names every failed one with its path; DELETE /v0/agents/{ns}/{name}@{version} is the
 * author's yank. A hosted gateway with the fake GitHub (tests/support/fake-github.ts) and
 * allowPrivateEndpoints, so that webhook agents on 127.0.0.1 can be published; real Postgres and Redis.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, test, vi } from 'vitest';
import { stringify } from 'yaml';
import { publishCommand } from '../../services/cli/publish.js';
import type { Config } from '../../shared/platform/config.js';
import { startFakeGitHub, type FakeGitHub } from '../support/fake-github.js';
import { signInWithGitHub } from '../support/github-accounts.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { startWebhookAgent, type PublishedServer } from '../support/published-servers.js';
import { send, signUp, workMandate, type Account } from '../support/hosted.js';

let github: FakeGitHub;
let agent: PublishedServer;
let endpoint: string;

beforeAll(async () => {
  agent = await startWebhookAgent({ tls: false });
  endpoint = `http://127.0.0.1:${agent.port}/echo`;
});
afterAll(async () => {
  await agent.close();
});
beforeEach(async () => {
  github = await startFakeGitHub();
  return () => github.close();
});

const withGitHub = (extra: Partial<Config> = {}): Partial<Config> => ({ ...github.config, githubTimeoutMs: 400, allowPrivateEndpoints: true, ...extra });

/** A manifest body: proprietary unless `repository` is given (then MIT, with that source.repository). */
function manifest(id: string, extra: Record<string, unknown> = {}, repository?: string): Record<string, unknown> {
  return {
    id,
    version: '1.0.0',
    summary: `${id}, published for a test`,
    capabilities: ['text.echo'],
    license: repository ? 'MIT' : 'proprietary',
    ...(repository ? { source: { repository } } : {}),
    interface: { input: { type: 'object' }, output: { type: 'object' } },
    pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
    runtime: { kind: 'webhook', endpoint, limits: { timeout_s: 10 } },
    ...extra,
  };
}

const publish = (g: TestGateway, a: Account, body: unknown) => send(g.url, 'POST', '/v0/agents', { key: a.human, body });
const listedCount = async (g: TestGateway) => Number((await g.db.knex('published_versions').count<Array<{ n: string }>>('* as n'))[0]!.n);
const paths = (body: any): string[] => (body.error.problems as Array<{ path: string }>).map((p) => p.path);

test('an owned public open-source agent is listed, callable by another account, and yanked by its author only', async () => {
  await useAudited(await startTestGateway({ hosted: true, config: withGitHub() }), async (g) => {
    const bob = await signInWithGitHub(g.url, github, 'bob', 1001);
    github.addRepository({ owner: 'bob', name: 'echo' });
    const r = await publish(g, bob, manifest('bob/echo', {}, 'https://github.com/bob/echo'));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toEqual({
      agent: 'bob/echo',
      version: '1.0.0',
      author: 'bob',
      license: 'MIT',
      source: { repository: 'bob/echo' },
      listed: true,
      evaluation: { status: 'none', suites: [] },
    });
    expect(await g.db.knex('published_versions').select('agent_id', 'author', 'repository')).toEqual([
      { agent_id: 'bob/echo', author: 'bob', repository: 'bob/echo' },
    ]);

    // Another account calls it by name, and pays its author.
    const alice = await signUp(g.url, 'alice');
    const work = await workMandate(g.url, alice, { allow: { agents: ['bob/*'], capabilities: ['text.*'] } });
    const call = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'bob/echo', input: { n: 1 } } });
    expect(call.status, JSON.stringify(call.body)).toBe(200);
    expect(call.body).toMatchObject({ output: { echo: { n: 1 } }, receipt: { agent: 'bob/echo@1.0.0', billed: true } });

    // A proprietary version is listed without any repository check, labelled so.
    const before = github.requests.length;
    const prop = await publish(g, bob, manifest('bob/closed'));
    expect(prop.status, JSON.stringify(prop.body)).toBe(201);
    expect(prop.body.source).toBe('proprietary');
    expect(github.requests.length).toBe(before);

    // Only the author yanks: another account (linked or not) gets 404, as if it did not exist.
    const carol = await signInWithGitHub(g.url, github, 'carol', 1003);
    for (const who of [alice, carol]) {
      const refused = await send(g.url, 'DELETE', '/v0/agents/bob/echo@1.0.0', { key: who.human });
      expect(refused.status).toBe(404);
    }
    expect(g.gw.context.registry.resolve('bob/echo').ok).toBe(true);
    const yank = await send(g.url, 'DELETE', '/v0/agents/bob/echo@1.0.0', { key: bob.human });
    expect(yank.status, JSON.stringify(yank.body)).toBe(200);
    expect(yank.body).toMatchObject({ agent: 'bob/echo', version: '1.0.0', yanked_by: 'bob' });
    expect(g.gw.context.registry.resolve('bob/echo').ok).toBe(false);
    const afterYank = await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'bob/echo', input: {} } });
    expect(afterYank.status).toBe(404);

    // The yanked number stays taken; a new number is listed.
    const again = await publish(g, bob, manifest('bob/echo', {}, 'https://github.com/bob/echo'));
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'version_taken', problems: [{ path: '$.version' }] });
    const next = await publish(g, bob, manifest('bob/echo', { version: '1.0.1' }, 'https://github.com/bob/echo'));
    expect(next.status, JSON.stringify(next.body)).toBe(201);
    const reused = await publish(g, bob, manifest('bob/echo', { version: '1.0.1' }, 'https://github.com/bob/echo'));
    expect(reused.status).toBe(409);

    // `holon publish holon.yaml`: 0 listed, 1 refused (every problem printed with its path), 2 misused.
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-publish-'));
    const file = path.join(dir, 'holon.yaml');
    await writeFile(file, stringify(manifest('bob/echo', { version: '1.0.2' }, 'https://github.com/bob/echo')));
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => out.push(String(chunk)) > 0);
    const quiet = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await publishCommand([file, '--url', g.url], { HOLON_KEY: bob.human })).toBe(0);
      expect(out.join('')).toContain('listed bob/echo@1.0.2 (source bob/echo)');
      out.length = 0;
      expect(await publishCommand([file], { HOLON_URL: g.url, HOLON_KEY: bob.human })).toBe(1);
      expect(out.join('')).toMatch(/refused, HTTP 409 version_taken.*\n {4}\$\.version: /);
      out.length = 0;
      expect(await publishCommand([file, '--json'], { HOLON_URL: g.url, HOLON_KEY: bob.human })).toBe(1);
      expect(JSON.parse(out.join(''))).toMatchObject({ listed: false, status: 409, problems: [{ path: '$.version' }] });
      expect(await publishCommand([file], { HOLON_URL: g.url })).toBe(2);
      expect(await publishCommand([], { HOLON_URL: g.url, HOLON_KEY: bob.human })).toBe(2);
      expect(await publishCommand([file, '--nope'], { HOLON_URL: g.url, HOLON_KEY: bob.human })).toBe(2);
    } finally {
      spy.mockRestore();
      quiet.mockRestore();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

test('every refused condition is listed with its path; nothing is listed', async () => {
  await useAudited(await startTestGateway({ hosted: true, config: withGitHub() }), async (g) => {
    const bob = await signInWithGitHub(g.url, github, 'bob', 1001);
    github.addUser({ id: 2002, login: 'someone' });
    github.addRepository({ owner: 'bob', name: 'secret', private: true });
    github.addRepository({ owner: 'someone', name: 'theirs' });
    github.addRepository({ owner: 'acme-org', name: 'tool', ownerType: 'Organization' });

    // An email-only account.
    const alice = await signUp(g.url, 'alice');
    const email = await publish(g, alice, manifest('alice/echo'));
    expect(email.status).toBe(403);
    expect(email.body.error).toMatchObject({ code: 'github_not_linked', message: expect.stringContaining('sign in with GitHub to publish') });

    // A foreign namespace: 403, and the other problems are listed too.
    const foreign = await publish(g, bob, manifest('someone/echo', { runtime: { kind: 'node' } }));
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.code).toBe('foreign_namespace');
    expect(paths(foreign.body)).toEqual(expect.arrayContaining(['$.id', '$.runtime.kind']));

    const refusals: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['private repo', manifest('bob/ra', {}, 'https://github.com/bob/secret'), '$.source.repository', /not a public GitHub repository/],
      ['missing repo', manifest('bob/rb', {}, 'https://github.com/bob/nothing'), '$.source.repository', /not a public GitHub repository/],
      ['somebody else’s repo', manifest('bob/rc', {}, 'https://github.com/someone/theirs'), '$.source.repository', /belongs to someone/],
      ['org, private member', manifest('bob/rd', {}, 'https://github.com/acme-org/tool'), '$.source.repository', /public member/],
      ['not GitHub', manifest('bob/re', {}, 'https://gitlab.com/bob/echo'), '$.source.repository', /./],
      ['open source without repo', manifest('bob/rf', { license: 'MIT' }), '$.source.repository', /required/],
      ['runtime node', manifest('bob/rg', { runtime: { kind: 'node' } }), '$.runtime.kind', /mcp, webhook or a2a/],
      ['credentials', manifest('bob/rh', { runtime: { kind: 'webhook', endpoint: 'https://u:p@example.com/x' } }), '$.runtime.endpoint', /user name/],
    ];
    for (const [what, body, path, message] of refusals) {
      const r = await publish(g, bob, body);
      expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(422);
      expect(r.body.error.code).toBe('invalid_manifest');
      expect(r.body.error.problems, what).toEqual(expect.arrayContaining([{ path, message: expect.stringMatching(message) }]));
    }

    // An invalid manifest: every problem, with its path.
    const invalid = await publish(g, bob, { ...manifest('bob/bad'), version: 'one', summary: 'x'.repeat(200), pricing: { model: 'per_run', currency: 'EUR' } });
    expect(invalid.status).toBe(422);
    expect(paths(invalid.body)).toEqual(expect.arrayContaining(['$.version', '$.summary', '$.pricing.amount']));
    expect(invalid.body.error.problems.length).toBeGreaterThanOrEqual(3);

    // GitHub failing or hanging: 502 / 503, nothing listed.
    github.fail('repos', 500);
    const failed = await publish(g, bob, manifest('bob/echo', {}, 'https://github.com/bob/echo'));
    expect(failed.status).toBe(502);
    expect(failed.body.error).toMatchObject({
      code: 'github_error',
      problems: [{ path: '$.source.repository', message: expect.stringContaining('HTTP 500') }],
    });
    github.fail('repos', 'hang');
    const hung = await publish(g, bob, manifest('bob/echo', {}, 'https://github.com/bob/echo'));
    expect(hung.status).toBe(503);
    expect(hung.body.error.code).toBe('github_unavailable');
    github.fail('repos', undefined);
    github.fail('members', 500);
    const members = await publish(g, bob, manifest('bob/rd', {}, 'https://github.com/acme-org/tool'));
    expect(members.status, JSON.stringify(members.body)).toBe(502);
    github.fail('members', undefined);
    expect(await listedCount(g)).toBe(0);
    expect(g.gw.context.registry.resolve('bob/echo').ok).toBe(false);

    // A public member of the organisation may list its repository.
    github.addPublicMember('acme-org', 'bob');
    const member = await publish(g, bob, manifest('bob/rd', {}, 'https://github.com/acme-org/tool'));
    expect(member.status, JSON.stringify(member.body)).toBe(201);
    expect(member.body.source).toEqual({ repository: 'acme-org/tool' });
    expect(await listedCount(g)).toBe(1);

    // A fork by a third account: royalty below the upstream's min_royalty, and a fork of a version not listed.
    const upstream = await publish(g, bob, manifest('bob/base', { forks: { allowed: true, min_royalty: '0.2' } }));
    expect(upstream.status, JSON.stringify(upstream.body)).toBe(201);
    const carol = await signInWithGitHub(g.url, github, 'carol', 1003);
    const low = await publish(g, carol, manifest('carol/fork', { lineage: { forked_from: 'bob/base@1.0.0', royalty: '0.1' } }));
    expect(low.status).toBe(422);
    expect(low.body.error.problems).toEqual([{ path: '$.lineage.royalty', message: expect.stringContaining('min_royalty') }]);
    const ghost = await publish(g, carol, manifest('carol/fork', { lineage: { forked_from: 'bob/base@9.0.0', royalty: '0.3' } }));
    expect(ghost.status).toBe(422);
    expect(paths(ghost.body)).toEqual(['$.lineage.forked_from']);
    const fork = await publish(g, carol, manifest('carol/fork', { lineage: { forked_from: 'bob/base@1.0.0', royalty: '0.25' } }));
    expect(fork.status, JSON.stringify(fork.body)).toBe(201);

    // A yanked upstream can no longer be forked.
    expect((await send(g.url, 'DELETE', '/v0/agents/bob/base@1.0.0', { key: bob.human })).status).toBe(200);
    const ofYanked = await publish(g, carol, manifest('carol/fork2', { lineage: { forked_from: 'bob/base@1.0.0', royalty: '0.25' } }));
    expect(ofYanked.status).toBe(422);

    // Not a human key: an agent key is a 403, no key a 401.
    expect((await send(g.url, 'POST', '/v0/agents', { key: bob.sandboxAgent, body: manifest('bob/x') })).status).toBe(403);
    expect((await send(g.url, 'POST', '/v0/agents', { body: manifest('bob/x') })).status).toBe(401);
  });
});

test('without the private-endpoint setting an http or private endpoint is refused; without a GitHub app publishing is off; dev mode has no route', async () => {
  await useAudited(await startTestGateway({ hosted: true, config: withGitHub() }), async (g) => {
    const bob = await signInWithGitHub(g.url, github, 'bob', 1001);
    const strict = await startTestGateway({ beside: g, roles: ['api'], hosted: true, config: withGitHub({ allowPrivateEndpoints: false }) });
    const off = await startTestGateway({ beside: g, roles: ['api'], hosted: true });
    try {
      const http = await send(strict.url, 'POST', '/v0/agents', { key: bob.human, body: manifest('bob/echo') });
      expect(http.status).toBe(422);
      expect(http.body.error.problems).toEqual([{ path: '$.runtime.endpoint', message: 'must be an https URL' }]);
      const loopback = manifest('bob/echo', { runtime: { kind: 'webhook', endpoint: 'https://127.0.0.1:9/echo' } });
      const priv = await send(strict.url, 'POST', '/v0/agents', { key: bob.human, body: loopback });
      expect(priv.status).toBe(422);
      expect(priv.body.error.problems).toEqual([{ path: '$.runtime.endpoint', message: expect.stringContaining('loopback') }]);

      const noApp = await send(off.url, 'POST', '/v0/agents', { key: bob.human, body: manifest('bob/echo') });
      expect(noApp.status).toBe(503);
      expect(noApp.body.error.code).toBe('publishing_off');
      expect(await listedCount(g)).toBe(0);
    } finally {
      await strict.stop();
      await off.stop();
    }
  });
  await useAudited(await startTestGateway(), async (g) => {
    expect((await g.post('/v0/agents', manifest('examples/x'))).status).toBe(404);
    expect((await send(g.url, 'DELETE', '/v0/agents/examples/x@1.0.0')).status).toBe(404);
  });
});

test('two API processes racing to publish one version: exactly one lists it, the other answers 409 and lists nothing', async () => {
  await useAudited(await startTestGateway({ hosted: true, config: withGitHub() }), async (g) => {
    const bob = await signInWithGitHub(g.url, github, 'bob', 1001);
    github.addRepository({ owner: 'bob', name: 'echo' });
    const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true, config: withGitHub() });
    try {
      for (const version of ['1.0.0', '1.0.1', '1.0.2']) {
        const body = manifest('bob/echo', { version }, 'https://github.com/bob/echo');
        const answers = await Promise.all([
          publish(g, bob, body),
          send(other.url, 'POST', '/v0/agents', { key: bob.human, body }),
          publish(g, bob, body),
          send(other.url, 'POST', '/v0/agents', { key: bob.human, body }),
        ]);
        expect(answers.map((a) => a.status).sort(), JSON.stringify(answers.map((a) => a.body))).toEqual([201, 409, 409, 409]);
        for (const lost of answers.filter((a) => a.status === 409)) expect(lost.body.error.code).toBe('version_taken');
      }
      expect(await listedCount(g)).toBe(3);
      const rows = await g.db.knex('published_versions').select('version').orderBy('version');
      expect(rows.map((r) => r.version)).toEqual(['1.0.0', '1.0.1', '1.0.2']);
    } finally {
      await other.stop();
    }
  });
});

test('publishing and drafting have their own per-account hourly buckets, shared by every API process; attempts count, refusals too', async () => {
  const limits = {
    rateLimits: { perAddressPerMin: 10_000, perAccountPerMin: 10_000, signupsPerHour: 100, publishesPerHour: 3, draftsPerHour: 2, evaluationsPerHour: 2 },
  };
  await useAudited(await startTestGateway({ hosted: true, config: withGitHub(limits) }), async (g) => {
    const bob = await signInWithGitHub(g.url, github, 'bob', 1001);
    const carol = await signInWithGitHub(g.url, github, 'carol', 1003);
    const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true, config: withGitHub(limits) });
    try {
      // Three attempts in all, across both processes, one of them refused (a foreign namespace): the fourth is limited.
      expect((await publish(g, bob, manifest('bob/one'))).status).toBe(201);
      expect((await send(other.url, 'POST', '/v0/agents', { key: bob.human, body: manifest('carol/not-mine') })).status).toBe(403);
      expect((await publish(g, bob, manifest('bob/two'))).status).toBe(201);
      const limited = await send(other.url, 'POST', '/v0/agents', { key: bob.human, body: manifest('bob/three') });
      expect(limited.status).toBe(429);
      expect(limited.body.error).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('too many publishes from this account') });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(3000);
      expect(g.gw.context.registry.resolve('bob/three').ok).toBe(false);
      // Another account has its own bucket; the general limits still admit bob elsewhere.
      expect((await publish(g, carol, manifest('carol/one'))).status).toBe(201);
      expect((await send(g.url, 'GET', '/v0/me/agents', { key: bob.human })).status).toBe(200);

      // Drafts: two attempts (a failing endpoint counts), then 429; publishing is a separate bucket.
      const draft = (a: Account, url: string) => send(url, 'POST', '/v0/agents/draft', { key: a.human, body: { name: 'drafted', endpoint, input: { n: 1 } } });
      expect((await draft(carol, g.url)).status).toBe(200);
      expect(
        (await send(other.url, 'POST', '/v0/agents/draft', { key: carol.human, body: { name: 'drafted', endpoint: 'http://127.0.0.1:9/nothing', input: {} } }))
          .status,
      ).toBe(422);
      const tooMany = await draft(carol, other.url);
      expect(tooMany.status).toBe(429);
      expect(tooMany.body.error.message).toContain('too many drafts from this account');
      expect((await draft(bob, g.url)).status).toBe(200);

      // Re-runs of evaluations: their own bucket too (no suite applies here: 409, which still counts).
      const rerun = (url: string) => send(url, 'POST', '/v0/agents/bob/one@1.0.0/evaluate', { key: bob.human });
      expect((await rerun(g.url)).body.error.code).toBe('no_suite');
      expect((await rerun(other.url)).status).toBe(409);
      const limitedRerun = await rerun(g.url);
      expect(limitedRerun.status).toBe(429);
      expect(limitedRerun.body.error.message).toContain('too many evaluation re-runs from this account');
    } finally {
      await other.stop();
    }
  });
});
