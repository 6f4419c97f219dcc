/**
 * `npm start` stops whole: SIGTERM to the npm process (what a process manager or `kill` sends), or Ctrl-C (SIGINT to
 * the terminal's process group), stops the gateway and the reference MCP agent host inside it — no process is left
 * listening on either port (services/cli/parent-watch.ts: npm's `sh -c` does not pass SIGTERM on). The agent host
 * runs on HOLON_AGENT_HOST_PORT, so a free port is used and the shipped agents are called there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { freePort, REPO_ROOT } from '../support/processes.js';
import { poll } from '../support/poll.js';

const started: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  // Whatever happened, nothing of this test keeps running: the whole process group (npm, sh, the gateway).
  for (const child of started.splice(0)) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function healthy(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(1_000) })).ok;
  } catch {
    return false;
  }
}

async function npmStart(): Promise<{ child: ChildProcess; port: number; hostPort: number; output: () => string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'holon-npm-start-'));
  dirs.push(dir);
  const [port, hostPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOLON_AGENT_HOST_PORT: String(hostPort),
    HOLON_DB: path.join(dir, 'db'),
    LOG_LEVEL: 'warn',
  };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  delete env.HOST;
  delete env.HOLON_AGENT_HOST;
  // Its own process group, as a terminal gives a foreground job: Ctrl-C is a SIGINT to the group.
  const child = spawn('npm', ['start'], { cwd: REPO_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const output = () => out.slice(-4000);
  await poll(
    async () => {
      if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode})\n${output()}`);
      return (await healthy(`http://127.0.0.1:${port}/healthz`)) && (await healthy(`http://127.0.0.1:${hostPort}/healthz`));
    },
    { what: 'the gateway and the agent host to answer /healthz', timeoutMs: 90_000, intervalMs: 200, context: output },
  );
  return { child, port, hostPort, output };
}

async function bothClosed(port: number, hostPort: number, output: () => string): Promise<void> {
  await poll(async () => !(await listening(port)) && !(await listening(hostPort)), {
    what: 'both ports to close',
    timeoutMs: 10_000,
    intervalMs: 100,
    context: output,
  });
}

describe('npm start', () => {
  test('SIGTERM to the npm process stops the gateway and the agent host: no orphan left listening', async () => {
    const { child, port, hostPort, output } = await npmStart();
    // The shipped MCP agents are called on HOLON_AGENT_HOST_PORT: a paid call through the gateway reaches the host.
    const r = await fetch(`http://127.0.0.1:${port}/v0/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mandate: 'demo/sandbox', agent: 'holon-labs/csv-profile', input: { csv: 'a,b\n1,x\n' } }),
    });
    expect(r.status, output()).toBe(200);
    expect(await r.json()).toMatchObject({ output: { rows: 1 }, receipt: { status: 'succeeded', billed: true } });

    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    process.kill(child.pid!, 'SIGTERM');
    await exited;
    await bothClosed(port, hostPort, output);
  });

  test('Ctrl-C (SIGINT to the process group) stops both too', async () => {
    const { child, port, hostPort, output } = await npmStart();
    process.kill(-child.pid!, 'SIGINT');
    await bothClosed(port, hostPort, output);
  });
});
