/**
 * Dev mode: `holon serve` also runs the reference MCP host (agents/host.mjs) when the registry lists agents from
 * `agents/`, on the address their `runtime.endpoint` names in the registry (http://127.0.0.1:7474/mcp, or the port
 * of HOLON_AGENT_HOST_PORT: shared/registry/agent-host.ts), so the two real agents answer without a second command.
 * The host can also run on its own (`node agents/host.mjs`): when the port is taken, the gateway says so and goes on,
 * calling whatever answers there.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentHost } from '../../agents/host.mjs';
import type { Logger } from '../../shared/platform/log.js';
import type { Registry } from '../../shared/registry/registry.js';

/**
 * agents/, where agents/host.mjs is (its own AGENTS_DIR, found the same way): named here so that every role, which
 * points the registry at it, does not load the host and its MCP server (loaded only when the host starts).
 */
export const AGENTS_DIR = path.dirname(fileURLToPath(new URL('../../agents/host.mjs', import.meta.url)));

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Where the listed agents of `agents/` expect their host, if anywhere (loopback http only). */
function devHostAddress(registry: Registry): { host: string; port: number } | undefined {
  const inAgentsDir = (dir: string | undefined) => dir !== undefined && path.resolve(dir).startsWith(AGENTS_DIR + path.sep);
  for (const a of registry.list()) {
    const { runtime } = a.manifest;
    if (runtime.kind !== 'mcp' || !runtime.endpoint || !inAgentsDir(a.dir)) continue;
    const url = new URL(runtime.endpoint);
    if (url.protocol !== 'http:' || !LOOPBACK.has(url.hostname)) continue;
    return { host: url.hostname === '[::1]' ? '::1' : url.hostname, port: Number(url.port || 80) };
  }
  return undefined;
}

export async function startDevAgentHost(registry: Registry, log: Logger): Promise<AgentHost | undefined> {
  const address = devHostAddress(registry);
  if (!address) return undefined;
  const { startAgentHost } = await import('../../agents/host.mjs');
  try {
    const host = await startAgentHost({
      ...address,
      dir: AGENTS_DIR,
      log: (level, message) => {
        if (level === 'warn' || level === 'error') log[level]({ component: 'agent-host' }, message);
      },
    });
    log.info({ url: host.url, tools: host.tools }, 'reference MCP agent host listening');
    return host;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    log.warn(
      { address: `${address.host}:${address.port}`, code },
      code === 'EADDRINUSE'
        ? `the reference MCP agent host was not started: port ${address.port} is taken (a host running on its own answers there)`
        : 'the reference MCP agent host could not start',
    );
    return undefined;
  }
}
