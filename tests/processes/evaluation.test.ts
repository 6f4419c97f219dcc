/**
 * Evaluation at publish time (spec/evals.md, gateway.md §7), across processes: an API (with runner and settler) in
 * this process, `holon evaluator` as separate OS processes, real Postgres and Redis, the fake GitHub, and webhook
 * agents served here on loopback. A version is published → one evaluation per suite its capabilities claim is
 * queued in the same transaction → an evaluator runs every case through the guarded client with the author's
 * credential → results: public cases in detail, hidden ones (HOLON_PRIVATE_EVALS) as pass/fail only, nowhere else.
 * `require.evaluated` refuses while pending and when failed, admits once passed. A re-run; an agent failing half
 * the cases; one that times out; an evaluator killed with SIGKILL mid-suite, resumed by another without counting
 * a case twice.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, onTestFailed, test } from 'vitest';
import { send, signUp, workMandate, type Account } from '../support/hosted.js';
import { startTestCluster, startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { startFakeGitHub, type FakeGitHub } from '../support/fake-github.js';
import { signInWithGitHub } from '../support/github-accounts.js';
import { freePort, type Cluster } from '../support/processes.js';
import { poll } from '../support/poll.js';

const SECRET = 'file-secret-for-evaluation-tests-0123456789abcdef';
const TOKEN = 'evaluation-endpoint-token-4f1c';
const FIXTURE = 'hello world';
/** What the hidden suite holds: none of it may reach an API answer or a log. */
const HIDDEN_MARKERS = ['SeCrEtInPuT', 'SECRETINPUT', 'secret-one', 'secret-two'];

const PUBLIC_SUITE = `capability: test.eval
version: 1
pass_threshold: "0.75"
cases:
  - id: upper
    input: { text: abc }
    expect: { output: { upper: ABC } }
  - id: length
    input: { text: hello }
    expect: { paths: { "/length": 5 } }
  - id: missing
    input: { missing: true }
    expect: { error: nothing_here }
  - id: fixture
    input: { file: "holon://evals/test.eval/data.txt" }
    expect: { paths: { "/size": ${FIXTURE.length}, "/sha_ok": true } }
`;
const HIDDEN_SUITE = `capability: test.hidden
version: 2
pass_threshold: "1"
cases:
  - id: secret-one
    input: { text: SeCrEtInPuT }
    expect: { output: { upper: SECRETINPUT } }
  - id: secret-two
    input: { text: zz }
    expect: { paths: { "/length": 2 } }
`;
const KILL_SUITE = `capability: test.kill
version: 1
pass_threshold: "1"
cases:
${Array.from({ length: 6 }, (_, i) => `  - id: slow-${i + 1}\n    input: { text: k${i}, sleep: 1200 }\n    expect: { output: { upper: K${i} } }`).join('\n')}
`;

interface Hit {
  path: string;
  authorization: string | null;
  input: any;
}

/** Webhook agents: /good answers right, /half gets half the cases wrong, /slow takes 2.5 s. */
async function startAgents(): Promise<{ url: string; hits: Hit[]; close(): Promise<void> }> {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      hits.push({ path: req.url ?? '', authorization: req.headers.authorization ?? null, input });
      const answer = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const half = req.url === '/half';
      if (req.url === '/slow') await new Promise((r) => setTimeout(r, 2_500));
      if (input?.sleep) await new Promise((r) => setTimeout(r, input.sleep));
      if (input?.missing && !half) return answer(200, { error: { code: 'nothing_here', message: 'nothing to work on' } });
      if (typeof input?.file === 'string') {
        const link = JSON.parse(String(req.headers['x-holon-files'] ?? '{}'))[input.file];
        if (!link) return answer(200, { size: -1, sha_ok: false });
        // A case that timed out may fetch after its gateway stopped: that is the agent's failure, never the test's.
        const bytes = await fetch(link.url)
          .then(async (r) => Buffer.from(await r.arrayBuffer()))
          .catch(() => Buffer.alloc(0));
        const sha = createHash('sha256').update(bytes).digest('hex');
        return answer(200, { size: bytes.length, sha_ok: sha === link.sha256 && bytes.length === link.size });
      }
      const text = String(input?.text ?? '');
      return answer(200, { upper: text.toUpperCase(), length: text.length + (half ? 1 : 0) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function manifest(id: string, endpoint: string, capabilities: string[], timeoutS = 10): Record<string, unknown> {
  return {
    id,
    version: '1.0.0',
    summary: `${id}, evaluated in a test`,
    capabilities,
    license: 'proprietary',
    interface: {
      input: { type: 'object' },
      output: {
        type: 'object',
        properties: { upper: { type: 'string' }, length: { type: 'integer' }, size: { type: 'integer' }, sha_ok: { type: 'boolean' } },
      },
      errors: { nothing_here: { description: 'Nothing to work on', billed: false } },
    },
    pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
    runtime: { kind: 'webhook', endpoint, limits: { timeout_s: timeoutS } },
  };
}

let github: FakeGitHub;
let agents: Awaited<ReturnType<typeof startAgents>>;
let dirs: { root: string; public: string; private: string };

beforeAll(async () => {
  github = await startFakeGitHub();
  agents = await startAgents();
  const root = await mkdtemp(path.join(tmpdir(), 'holon-evaluation-'));
  dirs = { root, public: path.join(root, 'public'), private: path.join(root, 'private') };
  for (const [dir, capability, suite] of [
    [dirs.public, 'test.eval', PUBLIC_SUITE],
    [dirs.public, 'test.kill', KILL_SUITE],
    // A public suite the private one replaces: its case would pass nothing, so the test sees which one ran.
    [
      dirs.public,
      'test.hidden',
      'capability: test.hidden\nversion: 1\npass_threshold: "1"\ncases:\n  - id: public-one\n    input: { text: nope }\n    expect: { output: { upper: NEVER } }\n',
    ],
    [dirs.private, 'test.hidden', HIDDEN_SUITE],
  ] as const) {
    await mkdir(path.join(dir, capability, 'files'), { recursive: true });
    await writeFile(path.join(dir, capability, 'suite.yaml'), suite);
  }
  await writeFile(path.join(dirs.public, 'test.eval', 'files', 'data.txt'), FIXTURE);
});
afterAll(async () => {
  await agents?.close();
  await github?.close();
  await rm(dirs.root, { recursive: true, force: true });
});

/** An API (+ runner + settler) here, at a known URL the evaluator's fixture links point to, and a cluster for evaluators. */
async function withEvaluationGateway(use: (g: TestGateway, cluster: Cluster) => Promise<void>): Promise<void> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const shared = { evalsDir: dirs.public, privateEvalsDir: dirs.private, fileSecret: SECRET, allowPrivateEndpoints: true };
  const g = await startTestGateway({ roles: ['api', 'runner', 'settler'], hosted: true, config: { ...github.config, ...shared, port, publicUrl: url } });
  const { cluster, stop } = await startTestCluster({
    beside: g,
    env: {
      HOLON_HOSTED: '1',
      HOLON_EVALS: dirs.public,
      HOLON_PRIVATE_EVALS: dirs.private,
      HOLON_FILE_SECRET: SECRET,
      HOLON_PUBLIC_URL: url,
      HOLON_ALLOW_PRIVATE_ENDPOINTS: '1',
      LOG_LEVEL: 'info',
    },
  });
  onTestFailed(() => console.error(cluster.describe()));
  try {
    await useAudited(g, (gw) => use(gw, cluster));
  } finally {
    await stop();
  }
}

const versionView = async (g: TestGateway, a: Account, id: string) => {
  const me = await send(g.url, 'GET', '/v0/me/agents', { key: a.human });
  expect(me.status, JSON.stringify(me.body)).toBe(200);
  return { body: me.body, version: me.body.versions.find((v: any) => `${v.agent}@${v.version}` === id) };
};

async function evaluationEnds(g: TestGateway, a: Account, id: string, run = 0): Promise<any> {
  return poll(
    async () => {
      const { version } = await versionView(g, a, id);
      const e = version?.evaluation;
      return e && e.status !== 'pending' && e.suites.every((s: any) => s.run === run) ? e : undefined;
    },
    { what: `the evaluation of ${id} (run ${run})`, timeoutMs: 60_000 },
  );
}

test('publish → a separate evaluator runs the suites → public detail, hidden pass/fail; require.evaluated follows; a re-run', async () => {
  await withEvaluationGateway(async (g, cluster) => {
    const bob = await signInWithGitHub(g.url, github, 'bob', 2001);
    expect((await send(g.url, 'PUT', '/v0/agents/bob/good/credential', { key: bob.human, body: { token: TOKEN } })).status).toBe(200);
    const published = await send(g.url, 'POST', '/v0/agents', {
      key: bob.human,
      body: manifest('bob/good', `${agents.url}/good`, ['test.eval', 'test.hidden']),
    });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    expect(published.body.evaluation).toEqual({ status: 'pending', suites: ['test.eval', 'test.hidden'] });
    const rows = await g.db
      .knex('evaluations')
      .where({ agent_id: 'bob/good' })
      .orderBy('capability')
      .select('capability', 'status', 'hidden', 'suite_version', 'total', 'run');
    expect(rows).toEqual([
      { capability: 'test.eval', status: 'queued', hidden: false, suite_version: 1, total: 4, run: 0 },
      { capability: 'test.hidden', status: 'queued', hidden: true, suite_version: 2, total: 2, run: 0 },
    ]);

    // While it is pending, a mandate that requires evaluated versions refuses it, by name and by capability.
    const alice = await signUp(g.url, 'alice');
    const strict = await workMandate(g.url, alice, { allow: { agents: ['bob/*'], capabilities: ['test.*'], published: true }, require: { evaluated: true } });
    const pending = await send(g.url, 'POST', '/v0/calls', { key: strict.agent, body: { agent: 'bob/good', input: { text: 'x' } } });
    expect(pending.status, JSON.stringify(pending.body)).toBe(403);
    expect(JSON.stringify(pending.body)).toContain('has not passed its evaluation (pending)');
    const byCapability = await send(g.url, 'POST', '/v0/calls', { key: strict.agent, body: { capability: 'test.eval', input: { text: 'x' } } });
    expect(byCapability.status).toBe(403);
    expect(agents.hits.filter((h) => h.path === '/good')).toEqual([]);

    // Lists show how far an unfinished evaluation got (from counts, not case rows).
    const queued = (await send(g.url, 'GET', '/v0/catalog')).body.agents.find((a: any) => a.id === 'bob/good');
    expect(queued.evaluation).toMatchObject({
      status: 'pending',
      suites: [
        { capability: 'test.eval', status: 'queued', progress: '0/4 cases', passed: 0 },
        { capability: 'test.hidden', status: 'queued', progress: '0/2 cases', passed: 0 },
      ],
    });

    // The evaluator is its own process.
    const evaluator = await cluster.start('evaluator');
    const e = await evaluationEnds(g, bob, 'bob/good@1.0.0');
    if (process.env.HOLON_SHOW_EVALUATION) console.log(JSON.stringify(e, null, 2));
    expect(e.status).toBe('passed');
    const [pub, hidden] = e.suites;
    expect(pub).toMatchObject({
      capability: 'test.eval',
      suite_version: 1,
      status: 'passed',
      hidden: false,
      passed: 4,
      total: 4,
      pass_threshold: '0.75',
      run: 0,
    });
    expect(pub.duration_ms).toBeGreaterThanOrEqual(0);
    expect(pub.cases).toEqual([
      {
        case: 1,
        id: 'upper',
        passed: true,
        duration_ms: expect.any(Number),
        expected: { output: { upper: 'ABC' } },
        got: { output: { upper: 'ABC', length: 3 } },
      },
      {
        case: 2,
        id: 'length',
        passed: true,
        duration_ms: expect.any(Number),
        expected: { paths: { '/length': 5 } },
        got: { output: { upper: 'HELLO', length: 5 } },
      },
      { case: 3, id: 'missing', passed: true, duration_ms: expect.any(Number), expected: { error: 'nothing_here' }, got: { error: 'nothing_here' } },
      {
        case: 4,
        id: 'fixture',
        passed: true,
        duration_ms: expect.any(Number),
        expected: { paths: { '/size': FIXTURE.length, '/sha_ok': true } },
        got: { output: { size: FIXTURE.length, sha_ok: true } },
      },
    ]);
    // The private suite replaced the public one of its capability, and shows each case as pass/fail only.
    expect(hidden).toMatchObject({ capability: 'test.hidden', suite_version: 2, status: 'passed', hidden: true, passed: 2, total: 2 });
    expect(hidden.cases).toEqual([
      { case: 1, passed: true },
      { case: 2, passed: true },
    ]);
    // Every case went to the author's server with the author's token; the fixture was downloaded through its link.
    const good = agents.hits.filter((h) => h.path === '/good');
    expect(good).toHaveLength(6);
    expect(new Set(good.map((h) => h.authorization))).toEqual(new Set([`Bearer ${TOKEN}`]));

    // Shown in the catalogue, the agent's view and MCP's: never the hidden cases' contents.
    const catalog = await send(g.url, 'GET', '/v0/catalog');
    const entry = catalog.body.agents.find((a: any) => a.id === 'bob/good');
    expect(entry.evaluation).toMatchObject({
      status: 'passed',
      suites: [
        { capability: 'test.eval', passed: 4 },
        { capability: 'test.hidden', passed: 2 },
      ],
    });
    expect(entry.versions).toEqual([expect.objectContaining({ version: '1.0.0', evaluation: 'passed' })]);
    const view = await send(g.url, 'GET', '/v0/agents/bob/good', { key: alice.human });
    expect(view.body.evaluation.suites[1].cases).toEqual([
      { case: 1, passed: true },
      { case: 2, passed: true },
    ]);
    // MCP, through the SDK's own client: get_agent and search_agents carry the evaluation too.
    const mcp = new Client({ name: 'evaluation-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${strict.agent}` } } }));
    let mcpAnswers: unknown[];
    try {
      const got = (await mcp.callTool({ name: 'get_agent', arguments: { id: 'bob/good' } })) as any;
      expect(got.isError).toBeFalsy();
      expect(got.structuredContent.evaluation).toMatchObject({
        status: 'passed',
        suites: [{ capability: 'test.eval' }, { capability: 'test.hidden', hidden: true }],
      });
      expect(got.content[0].text).toContain('evaluation passed');
      const search = (await mcp.callTool({ name: 'search_agents', arguments: { capability: 'test.eval' } })) as any;
      expect(search.structuredContent.agents.map((a: any) => [a.id, a.evaluation.status])).toEqual([['bob/good', 'passed']]);
      mcpAnswers = [got, search];
    } finally {
      await mcp.close();
    }
    const answers = JSON.stringify([catalog.body, view.body, (await versionView(g, bob, 'bob/good@1.0.0')).body, mcpAnswers]);
    for (const marker of HIDDEN_MARKERS) expect(answers).not.toContain(marker);
    for (const marker of HIDDEN_MARKERS) expect(evaluator.output()).not.toContain(marker);
    expect(evaluator.output()).not.toContain(TOKEN);
    // The evaluation was not a call: no receipt, no call row, no measured run, nothing billed.
    expect(Number((await g.db.knex('calls').count<Array<{ n: string }>>('* as n'))[0]!.n)).toBe(0);
    expect(Number((await g.db.knex('call_events').count<Array<{ n: string }>>('* as n'))[0]!.n)).toBe(0);

    // Passed: the strict mandate admits it now.
    const admitted = await send(g.url, 'POST', '/v0/calls', { key: strict.agent, body: { agent: 'bob/good', input: { text: 'ok' } } });
    expect(admitted.status, JSON.stringify(admitted.body)).toBe(200);
    expect(admitted.body.output).toEqual({ upper: 'OK', length: 2 });

    // A re-run: a new run per suite, pending again (and refused again by the strict mandate) until it ends.
    const rerun = await send(g.url, 'POST', '/v0/agents/bob/good@1.0.0/evaluate', { key: bob.human });
    expect(rerun.status, JSON.stringify(rerun.body)).toBe(202);
    expect(rerun.body.evaluation.status).toBe('pending');
    expect(rerun.body.evaluation.suites.map((s: any) => [s.capability, s.run])).toEqual([
      ['test.eval', 1],
      ['test.hidden', 1],
    ]);
    const again = await send(g.url, 'POST', '/v0/agents/bob/good@1.0.0/evaluate', { key: bob.human });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('evaluation_running');
    expect((await send(g.url, 'POST', '/v0/agents/bob/good@1.0.0/evaluate', { key: alice.human })).status).toBe(404);
    expect((await send(g.url, 'POST', '/v0/agents/bob/nothing@1.0.0/evaluate', { key: bob.human })).status).toBe(404);
    const second = await evaluationEnds(g, bob, 'bob/good@1.0.0', 1);
    expect(second.status).toBe('passed');
    expect(Number((await g.db.knex('evaluations').where({ agent_id: 'bob/good' }).count<Array<{ n: string }>>('* as n'))[0]!.n)).toBe(4);
  });
});

test('an agent that fails half the cases, one that times out, and one the suites do not apply to', async () => {
  await withEvaluationGateway(async (g, cluster) => {
    const carol = await signInWithGitHub(g.url, github, 'carol', 2002);
    await cluster.start('evaluator');
    for (const [id, endpoint, timeout] of [
      ['carol/half', '/half', 10],
      ['carol/slow', '/slow', 1],
    ] as const) {
      const r = await send(g.url, 'POST', '/v0/agents', { key: carol.human, body: manifest(id, `${agents.url}${endpoint}`, ['test.eval'], timeout) });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    const none = await send(g.url, 'POST', '/v0/agents', { key: carol.human, body: manifest('carol/other', `${agents.url}/good`, ['text.other']) });
    expect(none.body.evaluation).toEqual({ status: 'none', suites: [] });

    const half = await evaluationEnds(g, carol, 'carol/half@1.0.0');
    expect(half.status).toBe('failed');
    expect(half.suites[0]).toMatchObject({ status: 'failed', passed: 2, total: 4 });
    expect(half.suites[0].cases.map((c: any) => [c.id, c.passed])).toEqual([
      ['upper', true],
      ['length', false],
      ['missing', false],
      ['fixture', true],
    ]);
    expect(half.suites[0].cases[1].reasons).toEqual(['/length: expected 5, got 6']);
    expect(half.suites[0].cases[2].reasons[0]).toMatch(/expected error nothing_here/);

    const slow = await evaluationEnds(g, carol, 'carol/slow@1.0.0');
    expect(slow.status).toBe('failed');
    expect(slow.suites[0]).toMatchObject({ passed: 0, total: 4 });
    for (const c of slow.suites[0].cases) {
      expect(c.passed).toBe(false);
      expect(c.got).toEqual({ error: 'timeout' });
    }

    // A failed evaluation does not unlist the version; require.evaluated refuses it, a mandate without it admits it.
    const dave = await signUp(g.url, 'dave');
    const strict = await workMandate(g.url, dave, { id: 'strict', allow: { agents: ['carol/*'], capabilities: ['test.*'] }, require: { evaluated: true } });
    const lax = await workMandate(g.url, dave, { id: 'lax', allow: { agents: ['carol/*'], capabilities: ['test.*', 'text.*'] } });
    const refused = await send(g.url, 'POST', '/v0/calls', { key: strict.agent, body: { agent: 'carol/half', input: { text: 'a' } } });
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toContain('has not passed its evaluation (failed)');
    expect((await send(g.url, 'POST', '/v0/calls', { key: lax.agent, body: { agent: 'carol/half', input: { text: 'a' } } })).status).toBe(200);
    // No suite for its capability: nothing to pass, the strict mandate admits it.
    expect((await send(g.url, 'POST', '/v0/calls', { key: strict.agent, body: { agent: 'carol/other', input: { text: 'a' } } })).status).toBe(200);
  });
});

test('an evaluator killed with SIGKILL mid-suite: another one resumes it, and no case is counted twice', async () => {
  await withEvaluationGateway(async (g, cluster) => {
    const erin = await signInWithGitHub(g.url, github, 'erin', 2003);
    const first = await cluster.start('evaluator');
    const r = await send(g.url, 'POST', '/v0/agents', { key: erin.human, body: manifest('erin/patient', `${agents.url}/good`, ['test.kill']) });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const [row] = await g.db.knex('evaluations').where({ agent_id: 'erin/patient' }).select('id');
    const judged = async () => Number((await g.db.knex('evaluation_cases').where({ evaluation_id: row.id }).count<Array<{ n: string }>>('* as n'))[0]!.n);
    await poll(async () => ((await judged()) >= 2 ? true : undefined), { what: 'two cases judged', timeoutMs: 30_000 });
    // While it runs, the author sees how far it got.
    const running = (await versionView(g, erin, 'erin/patient@1.0.0')).version.evaluation;
    expect(running.status).toBe('pending');
    expect(running.suites[0]).toMatchObject({ status: 'running', total: 6 });
    expect(running.suites[0].progress).toMatch(/^[2-6]\/6 cases$/);
    first.kill('SIGKILL');
    expect((await first.exit).signal).toBe('SIGKILL');
    const before = await judged();
    expect(before).toBeLessThan(6);

    await cluster.start('evaluator');
    const e = await evaluationEnds(g, erin, 'erin/patient@1.0.0');
    expect(e.suites[0]).toMatchObject({ status: 'passed', passed: 6, total: 6 });
    expect(e.suites[0].cases.map((c: any) => c.id)).toEqual(['slow-1', 'slow-2', 'slow-3', 'slow-4', 'slow-5', 'slow-6']);
    const [ended] = await g.db.knex('evaluations').where({ id: row.id }).select('attempts', 'passed', 'total');
    expect(ended.passed).toBe(6);
    expect(ended.attempts).toBeGreaterThanOrEqual(2);
    // The cases judged before the kill were not asked again; those in flight were (at least once each).
    const asked = agents.hits.filter((h) => typeof h.input?.text === 'string' && /^k\d$/.test(h.input.text)).map((h) => h.input.text);
    for (let i = 0; i < 6; i++) expect(asked.filter((t) => t === `k${i}`).length).toBeGreaterThanOrEqual(1);
    expect(asked.length).toBeLessThanOrEqual(6 + 2);
  });
});
