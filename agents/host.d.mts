// Types for agents/host.mjs (plain JavaScript, so that an author can copy it without a build step).
export type HostLogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface AgentHostOptions {
  /** Default 7474; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The directory whose `*\/holon.yaml` + `tool.mjs` are served (default: agents/). */
  dir?: string;
  /** What tools see as `ctx.env` (API keys, base URLs). Default process.env. */
  env?: Record<string, string | undefined>;
  log?: (level: HostLogLevel, message: string, fields?: Record<string, unknown>) => void;
  /** Browser origins allowed to call /mcp besides loopback pages (localhost, 127.0.0.1, [::1]); any other request with an Origin header is refused. */
  allowedOrigins?: string[];
}

export interface AgentHost {
  /** `http://host:port/mcp` */
  url: string;
  port: number;
  /** The tool names served. */
  tools: string[];
  close(): Promise<void>;
}

export const AGENTS_DIR: string;
export const MAX_BODY_BYTES: number;
export function startAgentHost(options?: AgentHostOptions): Promise<AgentHost>;
