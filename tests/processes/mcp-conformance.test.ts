/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, tests/support/mcp-conformance.ts) against
 * the gateway's `/mcp`, for both protocol revisions it serves there: 2025-11-25 (sessions, `initialize`) and
 * 2026-07-28 (stateless, `server/discover`, the per-request `_meta` envelope). `holon serve` runs as a process on its
 * embedded defaults (PGlite, the in-process queue), in dev mode, without the reference agent host: no scenario calls an
 * agent. The suite and Node 22 are installed the first time (npm registry) unless .ci/run did it already.
 *
 * Every scenario the revision runs must pass (no check a FAILURE), except those in NOT_APPLICABLE, each with why. The
 * map is exact both ways: a listed scenario (or check) that passes now, or a failure it does not list, fails the
 * test, which says what the suite said. An entry without `checks` excuses every failing check of its scenario but
 * the wire schema one (every message the gateway sent must match the revision's JSON schema, in every scenario); an
 * entry with `checks` excuses only those, so the scenario's other checks still count. docs/mcp.md, "Conformance".
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  byHand,
  ensureConformanceSuite,
  runConformance,
  type ConformanceCheck,
  type ProtocolVersion,
  type ScenarioResult,
  type Suite,
} from '../support/mcp-conformance.js';
import { printedPort, REPO_ROOT } from '../support/processes.js';

type Excuse = string | { why: string; checks: readonly string[] };

const testTool = (...tools: string[]) => `calls the suite's own test tool ${tools.join(', ')}, which a gateway does not offer`;
const taskFixtures = (...tools: string[]) =>
  `calls the suite's own task fixtures (${tools.join(', ')}: a tool that runs as a task, a sync one, …), which a gateway does not offer`;
const NO_RESOURCES = 'resources: the server declares no resources capability (-32601), and the suite reads its own test:// resources';
const NO_PROMPTS = 'prompts: the server declares no prompts capability (-32601), and the suite gets its own test prompts';
const NO_COMPLETIONS = 'completion/complete: the server declares no completions capability (-32601)';

/** In both revisions. */
const SHARED: Record<string, Excuse> = {
  'completion-complete': NO_COMPLETIONS,
  'tools-call-simple-text': testTool('test_simple_text'),
  'tools-call-image': testTool('test_image_content'),
  'tools-call-audio': testTool('test_audio_content'),
  'tools-call-embedded-resource': testTool('test_embedded_resource'),
  'tools-call-mixed-content': testTool('test_multiple_content_types'),
  'tools-call-error': testTool('test_error_handling'),
  'tools-call-with-progress': testTool('test_tool_with_progress'),
  'json-schema-2020-12': `looks for the suite's own test tool json_schema_2020_12_tool in tools/list, which a gateway does not offer`,
  'resources-list': NO_RESOURCES,
  'resources-read-text': NO_RESOURCES,
  'resources-read-binary': NO_RESOURCES,
  'resources-templates-read': NO_RESOURCES,
  'prompts-list': NO_PROMPTS,
  'prompts-get-simple': NO_PROMPTS,
  'prompts-get-with-args': NO_PROMPTS,
  'prompts-get-embedded-resource': NO_PROMPTS,
  'prompts-get-with-image': NO_PROMPTS,
};

const NOT_APPLICABLE: Record<ProtocolVersion, Record<string, Excuse>> = {
  '2025-11-25': {
    ...SHARED,
    'logging-set-level': 'logging/setLevel: the server declares no logging capability (-32601)',
    'tools-call-with-logging': `sends logging/setLevel first (no logging capability: -32601), then would call the suite's own test tool test_tool_with_logging`,
    'tools-call-sampling': testTool('test_sampling'),
    'tools-call-elicitation': testTool('test_elicitation'),
    'elicitation-sep1034-defaults': testTool('test_elicitation_sep1034_defaults'),
    'elicitation-sep1330-enums': testTool('test_elicitation_sep1330_enums'),
    'resources-subscribe': NO_RESOURCES,
    'resources-unsubscribe': NO_RESOURCES,
  },
  '2026-07-28': {
    ...SHARED,
    'server-stateless': {
      why: `these four checks need the suite's own diagnostic tools (test_missing_capability, test_streaming_elicitation, test_logging_tool), which a gateway does not offer; its other checks pass`,
      checks: [
        'sep-2575-server-rejects-undeclared-capability',
        'sep-2575-missing-capability-http-400',
        'sep-2575-http-server-no-independent-requests-on-stream',
        'sep-2575-server-no-log-without-loglevel',
      ],
    },
    caching: {
      why: `prompts/list, resources/list and resources/templates/list: the server declares neither prompts nor resources (-32601); tools/list's hints pass`,
      checks: ['sep-2549-prompts-list-caching-hints', 'sep-2549-resources-list-caching-hints', 'sep-2549-resources-templates-list-caching-hints'],
    },
    'http-custom-header-server-validation': 'needs a tool with a parameter marked x-mcp-header (sent as an Mcp-Param header); no gateway tool has one',
    'input-required-result-basic-elicitation': testTool('test_input_required_result_elicitation'),
    'input-required-result-basic-sampling': testTool('test_input_required_result_sampling'),
    'input-required-result-basic-list-roots': testTool('test_input_required_result_list_roots'),
    'input-required-result-request-state': testTool('test_input_required_result_request_state'),
    'input-required-result-multiple-input-requests': testTool('test_input_required_result_multiple_inputs'),
    'input-required-result-multi-round': testTool('test_input_required_result_multi_round'),
    'input-required-result-result-type': testTool('test_input_required_result_elicitation'),
    'input-required-result-tampered-state': testTool('test_input_required_result_tampered_state'),
    'input-required-result-capability-check': testTool('test_input_required_result_capabilities'),
    'input-required-result-non-tool-request': `calls prompts/get on the suite's own test prompt: the server declares no prompts capability (-32601)`,
    'tasks-lifecycle': taskFixtures('greet', 'slow_compute', 'failing_job', 'protocol_error_job'),
    'tasks-wire-fields': taskFixtures('slow_compute'),
    'tasks-request-state-removal': taskFixtures('slow_compute'),
    'tasks-mrtr-input': taskFixtures('confirm_delete', 'multi_input'),
    'tasks-mrtr-composition': taskFixtures('test_tool_with_task'),
    'tasks-required-task-error': `calls the suite's own failing_job, a tool that requires a task; no gateway tool requires one (call_agent's task support is optional)`,
    'tasks-capability-negotiation': {
      why: taskFixtures('slow_compute'),
      checks: ['sep-2663-server-rejects-undeclared-client', 'tasks-per-request-meta-opt-in'],
    },
    'tasks-dispatch-and-envelope': {
      why: taskFixtures('greet', 'slow_compute', 'failing_job'),
      checks: [
        'tasks-server-directed-creation-no-hint',
        'sep-2663-legacy-task-param-ignored',
        'tasks-immediate-result-shortcut',
        'tasks-result-type-complete-on-non-task-responses',
        'sep-2663-durable-create-strong-consistency',
      ],
    },
    'tasks-request-headers': {
      why: taskFixtures('greet', 'slow_compute'),
      checks: [
        'tasks-headers-tolerate-mcp-method-on-tools-call',
        'sep-2663-routing-headers-accepted-on-tasks-get',
        'sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get',
      ],
    },
  },
};

/** Every message the server sent matches the revision's JSON schema: checked in every scenario, never excused. */
const WIRE_SCHEMA = 'wire-schema-valid';

const said = (c: ConformanceCheck): string =>
  `[${c.id}] ${c.description}${c.errorMessage ? `: ${c.errorMessage}` : ''}${c.details ? ` ${JSON.stringify(c.details).slice(0, 1000)}` : ''}`;

/** What is wrong with one scenario's result, given its entry in NOT_APPLICABLE (if any). */
function scenarioProblems({ scenario, checks }: ScenarioResult, excuse: Excuse | undefined): string[] {
  if (checks.length === 0) return [`${scenario}: the suite wrote no result for it (it crashed: see the suite's output)`];
  const failing = checks.filter((c) => c.status === 'FAILURE');
  if (excuse === undefined) return failing.map((c) => `${scenario} fails ${said(c)}`);
  if (typeof excuse === 'string') {
    if (failing.length === 0) return [`${scenario} passes now: remove it from NOT_APPLICABLE ("${excuse}")`];
    return failing.filter((c) => c.id === WIRE_SCHEMA).map((c) => `${scenario} fails ${said(c)}`);
  }
  const failingIds = new Set(failing.map((c) => c.id));
  return [
    ...excuse.checks.filter((id) => !failingIds.has(id)).map((id) => `${scenario} [${id}] passes now: remove it from NOT_APPLICABLE ("${excuse.why}")`),
    ...failing.filter((c) => !excuse.checks.includes(c.id)).map((c) => `${scenario} fails ${said(c)}`),
  ];
}

/** Every difference between what the suite found and NOT_APPLICABLE, in words; none when they agree. */
function problemsOf(results: ScenarioResult[], notApplicable: Record<string, Excuse>): string[] {
  const ran = new Set(results.map((r) => r.scenario));
  return [
    ...results.flatMap((r) => scenarioProblems(r, notApplicable[r.scenario])),
    ...Object.keys(notApplicable)
      .filter((s) => !ran.has(s))
      .map((s) => `${s} is in NOT_APPLICABLE but the suite did not run it`),
  ];
}

const summary = (results: ScenarioResult[]): string =>
  results.map((r) => `${r.checks.some((c) => c.status === 'FAILURE') || r.checks.length === 0 ? '✗' : '✓'} ${r.scenario}`).join('\n');

interface Gateway {
  url: string;
  output: () => string;
  stop: () => Promise<void>;
}

/** `holon serve` in dev mode on its embedded defaults, in a new data directory, without the reference agent host. */
async function startGateway(): Promise<Gateway> {
  const dir = await mkdtemp(path.join(tmpdir(), 'holon-conformance-'));
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', HOLON_AGENT_HOST: '0' };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'HOLON_MANDATES', 'HOLON_MCP_MANDATE', 'HOLON_X402_NETWORK', 'HOST']) delete env[name];
  const child: ChildProcess = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/holon.mjs'), 'serve', '--port', '0', '--db', path.join(dir, 'db')], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (c: Buffer): void => {
    out = (out + c).slice(-64 * 1024);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  const port = await printedPort(child, () => out, 90_000);
  if (!port) {
    await stop();
    throw new Error(`holon serve did not start:\n${out}`);
  }
  return { url: `http://127.0.0.1:${port}/mcp`, output: () => out, stop };
}

describe('the official MCP conformance suite against /mcp', () => {
  let suite: Suite;
  let gateway: Gateway | undefined;

  beforeAll(async () => {
    // Side by side: the gateway's start (its embedded database's migrations) and the suite's install (the first time).
    const [installed, started] = await Promise.allSettled([ensureConformanceSuite(), startGateway()]);
    if (started.status === 'fulfilled') gateway = started.value;
    if (installed.status === 'rejected') throw installed.reason;
    if (started.status === 'rejected') throw started.reason;
    suite = installed.value;
  }, 420_000);

  afterAll(async () => {
    await gateway?.stop();
  }, 30_000);

  test.each(['2025-11-25', '2026-07-28'] as const)(
    '%s: every scenario the revision runs passes, except the ones that do not apply to a gateway',
    async (version) => {
      const run = await runConformance(suite, gateway!.url, version);
      expect(run.scenarios.length, `the suite announced ${run.announced} scenarios and ran these:\n${summary(run.scenarios)}\n${run.output}`).toBe(
        run.announced,
      );
      const problems = problemsOf(run.scenarios, NOT_APPLICABLE[version]);
      const context = [
        summary(run.scenarios),
        `one scenario by hand: ${byHand(suite, gateway!.url, version, '<scenario>')}`,
        `the gateway said (tail):\n${gateway!.output().slice(-4000)}`,
      ].join('\n\n');
      expect(problems, context).toEqual([]);
    },
    300_000,
  );
});
