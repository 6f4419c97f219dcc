import type { Db } from './db/connect.js';
import type { Logger } from './platform/log.js';
import type { Messaging } from './messaging/types.js';
import type { Registry } from './registry/registry.js';
import type { RunResult, AgentVersion, RunContext } from '../services/runner/runtimes/types.js';

/** Queue names and job payloads: ids only, never inputs or outputs. */
export const RUN_QUEUE = 'run';
export const SETTLE_QUEUE = 'settle';
export const CALLBACK_QUEUE = 'callback';
/** Notifier channel: message = a call id whose receipt was just written. */
export const CALLS_DONE_CHANNEL = 'calls-done';

export interface CallJob {
  callId: string;
}

export const inputKey = (callId: string): string => `input:${callId}`;
export const outputKey = (callId: string): string => `output:${callId}`;

export interface GatewaySettings {
  /** How long a finished call's output waits for pickup (HOLON_RESULT_TTL_S). */
  resultTtlS: number;
  /** How long a queued call may wait for a runner before the sweeper closes it. */
  queueGraceS: number;
}

export interface RuntimeRunner {
  run(agent: AgentVersion, input: unknown, ctx: RunContext): Promise<RunResult>;
}

/** What the lifecycle code needs, shared by every service. */
export interface GatewayContext {
  db: Db;
  registry: Registry;
  messaging: Messaging;
  log: Logger;
  settings: GatewaySettings;
  now(): number;
}

export const DEFAULT_SETTINGS: GatewaySettings = { resultTtlS: 600, queueGraceS: 300 };
