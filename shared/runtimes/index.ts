/**
 * One entry point for running an agent, whatever its `runtime.kind`:
 *   node    → the dev runtime (agent.mjs, node.ts)
 *   webhook → the webhook contract (webhook.ts)
 *   mcp     → the Holon MCP agent profile over Streamable HTTP (mcp/runtime.ts)
 *   a2a     → the Holon A2A agent profile, with the A2A SDK's client (a2a/runtime.ts)
 * `run` never throws: every outcome is a RunResult. `close` releases what the runtimes keep (pooled MCP sessions,
 * the guarded client's connections).
 * With `published`, published agents' webhook and MCP calls go through the guarded client (published.ts); the
 * runner always passes it. Without it (runtime tests), every agent uses the ordinary client.
 */
import type { RuntimeKind } from '../core/manifest/types.js';
import { caught } from './abort.js';
import { createA2aRuntime, type A2aRuntimeOptions } from './a2a/runtime.js';
import { createMcpRuntime, type McpRuntimeOptions } from './mcp/runtime.js';
import { createNodeRuntime, type NodeRuntimeOptions } from './node.js';
import { createPublishedNetwork, type PublishedNetworkOptions } from './published.js';
import type { AgentVersion, RunContext, RunResult, Runtime } from './types.js';
import { createWebhookRuntime, type WebhookRuntimeOptions } from './webhook.js';

export type { Runtime } from './types.js';
export type { PublishedNetworkOptions } from './published.js';

export interface RuntimesOptions {
  node?: NodeRuntimeOptions;
  webhook?: WebhookRuntimeOptions;
  mcp?: McpRuntimeOptions;
  a2a?: A2aRuntimeOptions;
  /** Published agents go through the guarded client (gateway.md §7 "Network safety"). */
  published?: PublishedNetworkOptions;
  /** Replace the runtime of a kind (tests). */
  runtimes?: Partial<Record<RuntimeKind, Runtime>>;
}

export function createRuntimes(options: RuntimesOptions = {}): Runtime & { close(): Promise<void> } {
  const network = options.published ? createPublishedNetwork(options.published) : undefined;
  const byKind: Record<RuntimeKind, Runtime> = {
    node: options.runtimes?.node ?? createNodeRuntime(options.node),
    webhook: options.runtimes?.webhook ?? createWebhookRuntime({ ...options.webhook, ...(network ? { published: network } : {}) }),
    mcp: options.runtimes?.mcp ?? createMcpRuntime({ ...options.mcp, ...(network ? { published: network } : {}) }),
    a2a: options.runtimes?.a2a ?? createA2aRuntime({ ...options.a2a, ...(network ? { published: network } : {}) }),
  };
  return {
    async close(): Promise<void> {
      const closable = [...new Set(Object.values(byKind))].filter((r) => typeof r.close === 'function');
      await Promise.all(
        closable.map((r) =>
          Promise.resolve()
            .then(() => r.close!())
            .catch(() => undefined),
        ),
      );
      // After the MCP sessions ended (their DELETE goes through it).
      await network?.close().catch(() => undefined);
    },
    async run(agent: AgentVersion, input: unknown, ctx: RunContext): Promise<RunResult> {
      const kind = agent.manifest.runtime.kind;
      const runtime = Object.hasOwn(byKind, kind) ? byKind[kind] : undefined;
      if (!runtime) {
        return { kind: 'failure', code: 'runtime_unavailable', message: `no runtime for runtime.kind "${String(kind)}"` };
      }
      // Runtimes are built never to throw; if one does, the call still ends with a result (never billed).
      return caught(() => runtime.run(agent, input, ctx), 'runtime_unavailable');
    },
  };
}
