/**
 * The evaluator's case runner and its per-endpoint bound (services/evaluator/run-case.ts, endpoint-limit.ts): one
 * retry of a run that failed on the way, none of a timeout; the case's timeout wins over the manifest's; fixture
 * links only for the fixtures a case names; at most N cases at once per endpoint origin, origins independent.
 */
import { describe, expect, it } from 'vitest';
import { validateSuite, type SuiteCase } from '../../shared/core/evals/index.js';
import type { LoadedSuite } from '../../shared/evaluation/suites.js';
import type { AgentVersion, RunContext, RunResult, Runtime } from '../../shared/runtimes/types.js';
import { createEndpointLimit } from '../../services/evaluator/endpoint-limit.js';
import { runCase } from '../../services/evaluator/run-case.js';
import { buildManifest } from '../support/manifest-builder.js';
import { createRuntimes } from '../../shared/runtimes/index.js';
import { a2aAgent, asks, completes, startA2aAgent } from '../support/a2a-agents.js';

const agent: AgentVersion = {
  origin: 'published',
  manifest: buildManifest({
    id: 'acme/eval',
    interface: { input: { type: 'object' }, output: { type: 'object' }, errors: { nothing: { description: 'n', billed: false } }, examples: [] },
    runtime: { kind: 'webhook', endpoint: 'https://agent.example.org/run', timeoutS: 7 },
  }),
};

function suiteOf(cases: unknown[]): LoadedSuite {
  const v = validateSuite({ capability: 'test.run', version: 1, pass_threshold: '1', cases });
  if (!v.ok) throw new Error(JSON.stringify(v.problems));
  return {
    capability: 'test.run',
    suite: v.suite,
    hidden: false,
    file: '/nowhere/suite.yaml',
    fixturesDir: '/nowhere/files',
    fixtures: new Map([
      [
        'a.csv',
        { name: 'a.csv', handle: 'holon://evals/test.run/a.csv', file: '/nowhere/files/a.csv', size: 3, sha256: 'ab'.repeat(32), contentType: 'text/csv' },
      ],
    ]),
  };
}

/** A runtime answering from a script, one result per run, recording what each run was given. */
function scripted(results: RunResult[]): Runtime & { seen: RunContext[] } {
  const seen: RunContext[] = [];
  return {
    seen,
    async run(_agent, _input, ctx) {
      seen.push(ctx);
      return results.shift() ?? { kind: 'output', output: {} };
    },
  };
}

const signer = { secret: 'a-secret-for-the-links-of-this-test-0123456789', origin: () => 'https://holon.example' };
const now = () => Date.parse('2026-12-01T12:00:00Z');

describe('runCase', () => {
  const loaded = suiteOf([
    { id: 'ok', input: { file: 'holon://evals/test.run/a.csv' }, expect: { output: { rows: 1 } }, timeout_s: 3 },
    { id: 'plain', input: {}, expect: { output: { rows: 1 } } },
  ]);
  const [withFixture, plain] = loaded.suite.cases as [SuiteCase, SuiteCase];

  it('tries a run that failed on the way once more, and the second answer is judged', async () => {
    for (const code of ['runtime_unavailable', 'agent_error'] as const) {
      const runtime = scripted([
        { kind: 'failure', code, message: 'connection reset' },
        { kind: 'output', output: { rows: 1 } },
      ]);
      const run = await runCase({ runtimes: runtime, signer, now }, { agent, suite: loaded, case: withFixture, callId: 'ev_1.1' });
      expect(run.judgement.passed).toBe(true);
      expect(run.failure).toBeUndefined();
      expect(runtime.seen).toHaveLength(2);
    }
  });

  it('never a third time, and never after a timeout', async () => {
    const twice = scripted([
      { kind: 'failure', code: 'runtime_unavailable', message: 'down' },
      { kind: 'failure', code: 'runtime_unavailable', message: 'still down' },
      { kind: 'output', output: { rows: 1 } },
    ]);
    const failed = await runCase({ runtimes: twice, signer, now }, { agent, suite: loaded, case: plain, callId: 'ev_1.2' });
    expect(failed).toMatchObject({ failure: 'runtime_unavailable', judgement: { passed: false } });
    expect(twice.seen).toHaveLength(2);
    const slow = scripted([{ kind: 'failure', code: 'timeout', message: 'too slow' }]);
    expect((await runCase({ runtimes: slow, signer, now }, { agent, suite: loaded, case: plain, callId: 'ev_1.3' })).failure).toBe('timeout');
    expect(slow.seen).toHaveLength(1);
  });

  it("the case's timeout_s wins over the manifest's; fixture links only for the fixtures the case names", async () => {
    const runtime = scripted([
      { kind: 'output', output: { rows: 1 } },
      { kind: 'output', output: { rows: 1 } },
    ]);
    await runCase({ runtimes: runtime, signer, now }, { agent, suite: loaded, case: withFixture, callId: 'ev_1.1' });
    await runCase({ runtimes: runtime, signer, now }, { agent, suite: loaded, case: plain, callId: 'ev_1.2' });
    const [first, second] = runtime.seen as [RunContext, RunContext];
    expect(first.timeoutMs).toBe(3_000);
    expect(second.timeoutMs).toBe(7_000);
    expect(Object.keys(first.files ?? {})).toEqual(['holon://evals/test.run/a.csv']);
    const link = first.files!['holon://evals/test.run/a.csv']!;
    expect(link).toMatchObject({ content_type: 'text/csv', size: 3, sha256: 'ab'.repeat(32) });
    expect(link.url).toMatch(/^https:\/\/holon\.example\/v0\/files\/evals\/test\.run\/a\.csv\?exp=\d+&sig=[A-Za-z0-9_-]{43}$/);
    // Valid for the case's time and a minute, not the 15 minutes of an upload's link.
    expect(Date.parse(link.expires) - now()).toBe(63_000);
    expect(second.files).toBeUndefined();
  });
});

describe('an A2A agent’s cases', () => {
  it('run through the gateway’s runtimes like any other agent’s: the answer judged, a question a failure (no caller)', async () => {
    const suite = suiteOf([{ id: 'echo', input: { text: 'x' }, expect: { output: { echo: { text: 'x' } } } }]);
    const [echo] = suite.suite.cases as [SuiteCase];
    const runtimes = createRuntimes();
    const good = await startA2aAgent(completes);
    const asking = await startA2aAgent(asks);
    try {
      const passed = await runCase({ runtimes, signer, now }, { agent: a2aAgent(good.url, { origin: 'shipped' }), suite, case: echo, callId: 'ev_2.1' });
      expect(passed.judgement.passed).toBe(true);
      const asked = await runCase({ runtimes, signer, now }, { agent: a2aAgent(asking.url, { origin: 'shipped' }), suite, case: echo, callId: 'ev_2.2' });
      expect(asked).toMatchObject({ failure: 'agent_error', judgement: { passed: false } });
      expect(asking.cancels.length).toBeGreaterThan(0);
    } finally {
      await runtimes.close();
      await good.close();
      await asking.close();
    }
  });
});

describe('createEndpointLimit', () => {
  it('runs at most N cases at once per endpoint origin; other origins are not held back', async () => {
    const limit = createEndpointLimit(2);
    const active = new Map<string, number>();
    const peak = new Map<string, number>();
    const work = (origin: string) => async () => {
      active.set(origin, (active.get(origin) ?? 0) + 1);
      peak.set(origin, Math.max(peak.get(origin) ?? 0, active.get(origin)!));
      await new Promise((r) => setTimeout(r, 15));
      active.set(origin, active.get(origin)! - 1);
      return origin;
    };
    const results = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => limit.run(`https://a.example/tool${i}`, work('a'))),
      ...Array.from({ length: 2 }, () => limit.run('https://b.example:8443/mcp', work('b'))),
    ]);
    expect(results.filter((r) => r === 'a')).toHaveLength(6);
    expect(peak.get('a')).toBe(2);
    expect(peak.get('b')).toBe(2);
  });

  it('a case that throws frees its slot', async () => {
    const limit = createEndpointLimit(1);
    await expect(limit.run('https://c.example', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limit.run('https://c.example', async () => 'next')).resolves.toBe('next');
  });
});
