/**
 * MCP agents for gateway tests: the reference host (agents/host.mjs) over a directory of tools, in this process
 * or as a child process (to be killed), and a copy of their manifests whose `runtime.endpoint` points at it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

export const AGENTS_DIR = path.resolve('agents');
export const MCP_FIXTURES_DIR = path.resolve('tests/fixtures/mcp-agents');

/** Copy every `<dir>/*\/holon.yaml` into a new directory, with `runtime.endpoint` set to `url`. */
export async function manifestsPointingAt(dir: string, url: string): Promise<string> {
  const out = await mkdtemp(path.join(tmpdir(), 'holon-mcp-registry-'));
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const text = await readFile(path.join(dir, entry.name, 'holon.yaml'), 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    const rewritten = text.replace(/endpoint:\s*("[^"]*"|[^,\s}]+)/, `endpoint: "${url}"`);
    if (rewritten === text) throw new Error(`${entry.name}/holon.yaml names no runtime.endpoint`);
    await mkdir(path.join(out, entry.name));
    await writeFile(path.join(out, entry.name, 'holon.yaml'), rewritten);
  }
  return out;
}

export interface ChildHost {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** The host as a separate process (tests/fixtures/mcp-agents/serve.mjs). */
export async function startChildHost(dir: string): Promise<ChildHost> {
  const child = spawn(process.execPath, [path.join(MCP_FIXTURES_DIR, 'serve.mjs'), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolve(line.trim()));
    child.once('exit', (code) => reject(new Error(`the agent host exited with ${code}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
