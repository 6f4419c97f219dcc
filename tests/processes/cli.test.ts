import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { printedPort } from '../support/processes.js';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const FIX = path.join(ROOT, 'tests/fixtures');

async function holon(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(ROOT, 'bin/holon.mjs'), ...args], { cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('holon validate', () => {
  it('accepts a valid manifest and a valid mandate, exit 0', async () => {
    const r = await holon('validate', path.join(FIX, 'manifests/spec-example.yaml'), path.join(FIX, 'mandates/bookkeeping.yaml'));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('valid manifest lena/tables-fr@1.2.0');
    expect(r.stdout).toContain('valid mandate alice/bookkeeping-q4');
  });

  it('lists every problem with its path and exits 1', async () => {
    const r = await holon('validate', path.join(FIX, 'mandates/broken.yaml'));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/✗ .*broken\.yaml: invalid mandate, \d+ problems/);
    for (const p of ['$.id', '$.grantee', '$.budget.total', '$.budget.currency', '$.budget.per_call', '$.delegation.max_depth', '$.surprise']) {
      expect(r.stdout).toContain(`    ${p}`);
    }
  });

  it('--json gives a machine-readable report', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-cli-'));
    const file = path.join(dir, 'holon.yaml');
    await writeFile(
      file,
      'id: lena/x\nversion: 1.0\nsummary: s\ncapabilities: [a.b]\nlicense: MIT\ninterface: {input: {}, output: {}}\npricing: {model: per_run, currency: EUR, amount: 0.5}\nruntime: {kind: node}\n',
    );
    const r = await holon('validate', file, '--json');
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ file, kind: 'manifest', valid: false });
    const paths = report.problems.map((p: { path: string }) => p.path);
    expect(paths).toContain('$.version');
    expect(paths).toContain('$.pricing.amount');
  });

  it('says what is wrong with unreadable, unparseable and unrecognisable files', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-cli-'));
    await writeFile(path.join(dir, 'bad.yaml'), 'a: [1, 2\n');
    await writeFile(path.join(dir, 'other.json'), '{"hello": "world"}');
    const r = await holon('validate', path.join(dir, 'missing.yaml'), path.join(dir, 'bad.yaml'), path.join(dir, 'other.json'));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('cannot read the file: ENOENT');
    expect(r.stdout).toContain('not valid YAML');
    expect(r.stdout).toContain('neither a manifest');
  });

  it('says what to fix: line and column of a YAML error, the keyword path of a bad schema, a numeric version, a per_call above the total', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-cli-'));
    await writeFile(path.join(dir, 'syntax.yaml'), 'id: lena/x\nversion: "1.0.0"\n  summary: s\n');
    await writeFile(
      path.join(dir, 'holon.yaml'),
      'id: lena/xx\nversion: 1.0\nsummary: s\ncapabilities: [a.b]\nlicense: MIT\n' +
        'interface: {input: {type: object, properties: {name: {type: strin}}}, output: {type: object}}\n' +
        'pricing: {model: per_run, currency: EUR, amount: "0.50"}\nruntime: {kind: node}\n',
    );
    await writeFile(
      path.join(dir, 'mandate.yaml'),
      'id: alice/wide\nissuer: alice\ngrantee: alice/assistant\nallow: {agents: [holon-labs/*]}\nbudget: {total: "5.00", currency: EUR, per_call: "50.00"}\n',
    );
    const r = await holon('validate', path.join(dir, 'syntax.yaml'), path.join(dir, 'holon.yaml'), path.join(dir, 'mandate.yaml'));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/ {4}\$: not valid YAML \(line 3, column \d+\): /);
    expect(r.stdout).toContain('    $.interface.input.properties.name.type: must be one of the JSON Schema types');
    expect(r.stdout).not.toContain('schema is invalid');
    expect(r.stdout).toContain('    $.version: must be a semver string like 1.0.0');
    expect(r.stdout).toMatch(/✓ .*mandate\.yaml: valid mandate alice\/wide\n {2}! \$\.budget\.per_call: is 50\.00 EUR, above the total of 5\.00 EUR/);

    const alone = await holon('validate', path.join(dir, 'mandate.yaml'), '--json');
    expect(alone.code).toBe(0); // a warning, not a problem: the gateway accepts the mandate
    expect(JSON.parse(alone.stdout)).toMatchObject({ valid: true, problems: [], warnings: [{ path: '$.budget.per_call' }] });
  });

  it('misuse exits 2', async () => {
    expect((await holon('validate')).code).toBe(2);
    expect((await holon('validate', '--nope', 'x')).code).toBe(2);
    expect((await holon('frobnicate')).code).toBe(2);
  });
});

describe("holon serve on the embedded defaults (the README's first command)", () => {
  it('creates its data directory, loads the dev mandates with no flag, serves a paid call (REST, and MCP both ways), and stops cleanly on SIGTERM', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-serve-'));
    const env = { ...process.env, LOG_LEVEL: 'info' } as NodeJS.ProcessEnv;
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    delete env.HOLON_MANDATES;
    // `npx holon serve` as the README says it: no --mandates, yet demo/sandbox answers (examples/mandates by default).
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/holon.mjs'), 'serve', '--port', '0', '--db', path.join(dir, 'not', 'yet', 'db')], {
      cwd: ROOT,
      env,
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    try {
      const port = (await printedPort(child, () => out)) ?? 0;
      expect(port, out).toBeGreaterThan(0);
      const res = await fetch(`http://127.0.0.1:${port}/v0/calls`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mandate: 'demo/sandbox', agent: 'examples/echo-upper', input: { text: 'hello' } }),
      });
      const body = await res.json();
      expect(res.status).toBe(200);
      expect(body).toMatchObject({ output: { text: 'HELLO' }, receipt: { billed: true, cost: { total: '0.01' } } });

      // docs/mcp.md's dev path: an MCP client on /mcp (default mandate demo/sandbox) hires holon-labs/csv-profile,
      // served by the reference host that `holon serve` started, over MCP.
      const client = new Client({ name: 'readme-check', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      try {
        const r = await client.callTool({ name: 'call_agent', arguments: { agent: 'holon-labs/csv-profile', input: { csv: 'a,b\n1,x\n2,y\n' } } });
        expect(r.structuredContent, out).toMatchObject({ status: 'succeeded', output: { rows: 2 }, receipt: { mandate: 'demo/sandbox', billed: true } });
      } finally {
        await client.close();
      }
    } finally {
      const exited =
        child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  it('a SIGTERM that arrives while it starts (before every role is up) still ends in a clean stop: exit 0, the lock released', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'holon-serve-early-'));
    const env = { ...process.env, LOG_LEVEL: 'info', HOLON_AGENT_HOST: '0' } as NodeJS.ProcessEnv;
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    const db = path.join(dir, 'db');
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/holon.mjs'), 'serve', '--port', '0', '--db', db], { cwd: ROOT, env });
    let out = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // The first line it writes (the embedded-defaults warning) comes early in its start-up: stop it right then.
    await new Promise<void>((resolve) => {
      const first = (c: Buffer): void => {
        out += c;
        child.kill('SIGTERM');
        resolve();
      };
      child.stdout.once('data', first);
      child.stderr.once('data', first);
    });
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    expect(await exited, out).toBe(0);
    expect(existsSync(path.join(db, 'holon.lock')), out).toBe(false);
  });
});
