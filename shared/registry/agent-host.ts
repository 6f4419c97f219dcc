/**
 * The reference MCP agent host's port (HOLON_AGENT_HOST_PORT, docs/mcp.md "The reference agent host's port"). The
 * shipped manifests of agents/ name the host where it listens by default, `http://127.0.0.1:7474/mcp`, and stay as
 * they are (valid, publishable, the same for every reader). When the host runs on another port, the dev registry
 * calls those agents there: a shipped agent under the host's directory whose `runtime.endpoint` is plain http on
 * loopback port 7474 gets the configured port, the rest of its URL unchanged. Any other agent, and any published
 * version, is left alone.
 */
import path from 'node:path';
import type { Manifest } from '../core/manifest/index.js';
import { DEFAULT_AGENT_HOST_PORT } from '../platform/config.js';

export interface AgentHostPort {
  /** The directory of the agents the host serves (agents/). */
  dir: string;
  port: number;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The manifest of an agent found in `agentDir`, pointed at the host's configured port when it names the default one. */
export function onAgentHostPort(manifest: Manifest, agentDir: string, host: AgentHostPort): Manifest {
  if (host.port === DEFAULT_AGENT_HOST_PORT || manifest.runtime.kind !== 'mcp' || !manifest.runtime.endpoint) return manifest;
  const root = path.resolve(host.dir);
  const dir = path.resolve(agentDir);
  if (dir !== root && !dir.startsWith(root + path.sep)) return manifest;
  let url: URL;
  try {
    url = new URL(manifest.runtime.endpoint);
  } catch {
    return manifest;
  }
  if (url.protocol !== 'http:' || !LOOPBACK.has(url.hostname) || url.port !== String(DEFAULT_AGENT_HOST_PORT)) return manifest;
  url.port = String(host.port);
  return { ...manifest, runtime: { ...manifest.runtime, endpoint: url.href } };
}
