/**
 * The suites shipped in evals/ (docs/evaluation.md "The shipped suites"): each one loads, and every case passes
 * against the shipped agent of its capability, run in process through the node runtime — examples' agent.mjs as
 * they are, the MCP tools of agents/ through their tool.mjs handlers (sec-company against the fake EDGAR of
 * tests/support/fake-edgar.ts). Deliberately wrong agents fail the right cases.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeCase, suiteStatus, type CaseRunResult, type Suite, type SuiteCase } from '../../shared/core/evals/index.js';
import { compileInterface } from '../../shared/core/manifest/index.js';
import { loadDevRegistry } from '../../shared/registry/dev-registry.js';
import type { Registry } from '../../shared/registry/registry.js';
import { loadSuites, type SuiteCatalog } from '../../shared/evaluation/suites.js';
import { createNodeRuntime, type AgentContext, type Handler } from '../../shared/runtimes/node.js';
import type { AgentVersion, RunResult } from '../../shared/runtimes/types.js';
import { startFakeEdgar, type FakeEdgar } from '../support/fake-edgar.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EVALS = path.join(ROOT, 'evals');
const SHIPPED = readdirSync(EVALS, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

/** The agent each shipped suite is written against. */
const AGENT_OF: Record<string, string> = {
  'data.company.filings': 'holon-labs/sec-company',
  'data.profile': 'holon-labs/csv-profile',
  'test.flaky': 'examples/flaky',
  'test.slow': 'examples/slow',
  'text.count': 'examples/word-count',
  'text.transform': 'examples/echo-upper',
  'text.translate': 'examples/quote-translate',
};

interface ToolModule {
  default: (input: unknown, ctx: { signal?: AbortSignal; env?: Record<string, string> }) => Promise<{ output: unknown }>;
}

/** The environment of the MCP tools (the agent host's): sec-company's EDGAR is a fake on loopback. */
let fakeEdgar: FakeEdgar;
let toolEnv: Record<string, string> = {};

/**
 * An MCP tool of agents/ (agents/host.mjs serves `tool.mjs`) as a node handler: its output is the output, a
 * toolError(code) is the error code, as the host reports them over MCP.
 */
async function toolHandler(dir: string): Promise<Handler> {
  const tool = (await import(pathToFileURL(path.join(dir, 'tool.mjs')).href)) as ToolModule;
  return async (input: unknown, ctx: AgentContext) => {
    try {
      return (await tool.default(input, { signal: ctx.signal, env: toolEnv })).output;
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (typeof code === 'string') throw ctx.error(code, (e as Error).message);
      throw e;
    }
  };
}

const runtime = createNodeRuntime({
  loadHandler: async (agent) => {
    if (agent.manifest.runtime.kind === 'mcp') return toolHandler(agent.dir!);
    const mod = (await import(pathToFileURL(path.join(agent.dir!, 'agent.mjs')).href)) as { default: Handler };
    return mod.default;
  },
});

const asCaseResult = (r: RunResult): CaseRunResult =>
  r.kind === 'output'
    ? { kind: 'output', output: r.output }
    : r.kind === 'error'
      ? { kind: 'error', code: r.code, ...(r.message ? { message: r.message } : {}) }
      : r;

async function runCase(agent: AgentVersion, c: SuiteCase, over?: Partial<Pick<AgentVersion, 'dir'>> & { handler?: Handler }) {
  const rt = over?.handler ? createNodeRuntime({ loadHandler: async () => over.handler! }) : runtime;
  const timeoutMs = (c.timeout_s ?? agent.manifest.runtime.timeoutS) * 1000;
  const result = await rt.run(agent, c.input, { callId: `eval-${c.id}`, signal: AbortSignal.timeout(timeoutMs), timeoutMs });
  const iface = compileInterface(agent.manifest);
  return judgeCase(c, asCaseResult(result), iface.output, Object.keys(agent.manifest.interface.errors));
}

async function judgeSuite(agent: AgentVersion, suite: Suite, handler?: Handler) {
  const judged = [];
  for (const c of suite.cases) judged.push({ id: c.id, ...(await runCase(agent, c, handler ? { handler } : undefined)) });
  return judged;
}

let catalog: SuiteCatalog;
let registry: Registry;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  catalog = await loadSuites({ publicDir: EVALS }, log);
  fakeEdgar = await startFakeEdgar();
  toolEnv = fakeEdgar.env();
  registry = (await loadDevRegistry([path.join(ROOT, 'agents'), path.join(ROOT, 'examples')], { log, env: toolEnv })).registry;
});

afterAll(() => fakeEdgar.stop());

const agentFor = (capability: string): AgentVersion => {
  const agent = registry.implementers(capability).find((a) => a.manifest.id === AGENT_OF[capability]);
  if (!agent) throw new Error(`no shipped agent ${AGENT_OF[capability]} for ${capability}`);
  return agent;
};

describe('the shipped suites', () => {
  it('every directory of evals/ loads, none is skipped, each names the agent it is written against', () => {
    expect(SHIPPED).toEqual(Object.keys(AGENT_OF).sort());
    expect([...catalog.suites.keys()]).toEqual(SHIPPED);
    expect(lines.filter((l) => (l.level as number) >= 40)).toEqual([]);
    for (const s of catalog.suites.values()) {
      expect(s.hidden).toBe(false);
      expect(s.file).toBe(path.join(EVALS, s.capability, 'suite.yaml'));
    }
  });

  it('data.profile: at least 8 cases, every declared error of csv-profile, outputs by deep subset and by JSON Pointer', () => {
    const suite = catalog.get('data.profile')!.suite;
    const agent = agentFor('data.profile');
    expect(suite.cases.length).toBeGreaterThanOrEqual(8);
    const errors = new Set(suite.cases.map((c) => c.expect.error).filter(Boolean));
    expect([...errors].sort()).toEqual(Object.keys(agent.manifest.interface.errors).sort());
    expect(suite.cases.filter((c) => Object.hasOwn(c.expect, 'output')).length).toBeGreaterThanOrEqual(3);
    expect(suite.cases.filter((c) => c.expect.paths).length).toBeGreaterThanOrEqual(3);
  });

  it('the example suites have 3 to 6 cases', () => {
    for (const capability of SHIPPED.filter((c) => c !== 'data.profile')) {
      const n = catalog.get(capability)!.suite.cases.length;
      expect(n, capability).toBeGreaterThanOrEqual(3);
      expect(n, capability).toBeLessThanOrEqual(6);
    }
  });

  describe.each(SHIPPED)('%s', (capability) => {
    it('every input is a valid input of the agent, and every case passes against it', async () => {
      const { suite } = catalog.get(capability)!;
      const agent = agentFor(capability);
      const iface = compileInterface(agent.manifest);
      for (const c of suite.cases) expect(iface.input(c.input), `${capability} ${c.id}: input`).toEqual([]);
      const judged = await judgeSuite(agent, suite);
      for (const j of judged) expect({ id: j.id, reasons: j.reasons }).toEqual({ id: j.id, reasons: [] });
      expect(suiteStatus(judged.filter((j) => j.passed).length, judged.length, suite.threshold)).toBe('passed');
    });

    it('an agent answering {} fails every case', async () => {
      const { suite } = catalog.get(capability)!;
      const judged = await judgeSuite(agentFor(capability), suite, async () => ({}));
      expect(judged.filter((j) => j.passed).map((j) => j.id)).toEqual([]);
      for (const j of judged) {
        const c = suite.cases.find((x) => x.id === j.id)!;
        if (c.expect.error) expect(j.reasons).toEqual([`expected error ${c.expect.error}, got an output`]);
        else expect(j.reasons.some((r) => r.startsWith("the output does not match the version's interface.output"))).toBe(true);
      }
      expect(suiteStatus(0, judged.length, suite.threshold)).toBe('failed');
    });
  });
});

describe('deliberately wrong csv-profile agents fail the right cases', () => {
  const wrapped = async (change: (input: unknown, output: any) => unknown): Promise<Handler> => {
    const base = await toolHandler(path.join(ROOT, 'agents/csv-profile'));
    return async (input, ctx) => change(input, await base(input, ctx));
  };

  it('one row too many: exactly the cases that check rows', async () => {
    const { suite } = catalog.get('data.profile')!;
    const judged = await judgeSuite(agentFor('data.profile'), suite, await wrapped((_i, o) => ({ ...o, rows: o.rows + 1 })));
    expect(judged.filter((j) => !j.passed).map((j) => j.id)).toEqual([
      'mixed-types',
      'semicolons-crlf-and-quotes',
      'no-header-pipes',
      'bom-blank-lines-and-tabs',
    ]);
    expect(judged.find((j) => j.id === 'semicolons-crlf-and-quotes')!.reasons).toEqual(['/rows: expected 3, got 4']);
    expect(judged.find((j) => j.id === 'mixed-types')!.reasons).toEqual(['/rows: expected 3, got 4']);
    // 11 of 15 pass: below "0.8".
    expect(suiteStatus(judged.filter((j) => j.passed).length, judged.length, suite.threshold)).toBe('failed');
  });

  it('an agent that never reports an error fails exactly the error cases', async () => {
    const { suite } = catalog.get('data.profile')!;
    const agent = agentFor('data.profile');
    const base = await toolHandler(agent.dir!);
    const judged = await judgeSuite(agent, suite, async (input, ctx) => {
      try {
        return await base(input, ctx);
      } catch {
        return { rows: 0, columns: [] };
      }
    });
    const errorCases = suite.cases.filter((c) => c.expect.error).map((c) => c.id);
    expect(judged.filter((j) => !j.passed).map((j) => j.id)).toEqual(errorCases);
    expect(judged.find((j) => j.id === 'empty')!.reasons).toEqual(['expected error empty_input, got an output']);
  });

  it('another error code, or an undeclared one, fails', async () => {
    const { suite } = catalog.get('data.profile')!;
    const agent = agentFor('data.profile');
    const always =
      (code: string): Handler =>
      async (_i, ctx) => {
        throw ctx.error(code, 'no');
      };
    const c = suite.cases.find((x) => x.id === 'ragged-row')!;
    expect((await runCase(agent, c, { handler: always('empty_input') })).reasons).toEqual(['expected error malformed_csv, got error empty_input']);
    const undeclared = await runCase(agent, { ...c, expect: { error: 'not_declared' } }, { handler: always('not_declared') });
    expect(undeclared.reasons).toEqual(['got error not_declared as expected, but the version does not declare it in interface.errors']);
  });

  it('a crash and a timeout fail with plain reasons', async () => {
    const { suite } = catalog.get('data.profile')!;
    const agent = agentFor('data.profile');
    const c = suite.cases[0]!;
    const crash = await runCase(agent, c, {
      handler: async () => {
        throw new Error('boom');
      },
    });
    expect(crash.passed).toBe(false);
    expect(crash.reasons[0]).toMatch(/^the agent failed/);
    const slow = await runCase(
      agent,
      { ...c, timeout_s: 1 },
      {
        handler: (_i, ctx) =>
          new Promise((_resolve, reject) => {
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
          }),
      },
    );
    expect(slow).toMatchObject({ passed: false, reasons: ['the agent timed out'], got: { error: 'timeout' } });
  });
});
