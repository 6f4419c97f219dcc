/**
 * What the code of every service needs: the database, the registry of agents, the queues and the ephemeral
 * store, a logger, a few settings and the clock. Each service adds what only it uses (the runner its runtimes); the
 * call's code takes the call engine, built on these plus the process's waiter (shared/calls/engine.ts).
 */
import type { PaymentRails } from './payments/rails.js';
import type { Db } from './db/connect.js';
import type { Logger } from './platform/log.js';
import type { GatewayMetrics } from './platform/metrics.js';
import type { Messaging } from './messaging/types.js';
import type { Registry } from './registry/registry.js';
import type { SampleRecords } from './catalogue/sample-records.js';
import type { SigningKey } from './signing/keys.js';
import type { PayerRule } from './core/counted-payer.js';
import type { LeaseManager } from './ledger/leases/manager.js';
import { SETTINGS } from './platform/settings/index.js';
import { DEFAULT_LOG_ORIGIN } from './platform/settings/signing.js';

export interface ServiceSettings {
  /** How long a finished call's output waits for pickup (HOLON_RESULT_TTL_S). */
  resultTtlS: number;
  /** How long an agent's question waits for its caller's answer (HOLON_INPUT_TTL_S). */
  inputTtlS: number;
  /** How long a cut stream waits for its caller to come back before the call ends `disconnected` (HOLON_STREAM_RESUME_S). */
  streamResumeS: number;
  /** How long a queued call may wait for a runner before the sweeper closes it. */
  queueGraceS: number;
  /** HOLON_RANKING_MIN_PAYERS: distinct payers an agent version's runs need before its measured record moves its ranking. */
  rankingMinPayers: number;
  /**
   * Which payers count toward ranking facts and `require.min_success_rate` (shared/core/counted-payer.ts): vouched ones
   * on a hosted gateway (anyone may sign up), every one on a dev gateway (the operator makes every account).
   */
  payerRule: PayerRule;
  /** HOLON_RECORDS: sample Agent Records by agent id, shown only beside agents without measured runs; absent = off. */
  sampleRecords?: SampleRecords;
  /** The receipt log's origin, the first line of its checkpoints (HOLON_LOG_ORIGIN; docs/receipts.md "Checkpoints"). */
  logOrigin: string;
}

export interface ServiceContext {
  db: Db;
  registry: Registry;
  messaging: Messaging;
  log: Logger;
  settings: ServiceSettings;
  now(): number;
  /** The gateway's Ed25519 key (shared/signing/keys.ts): it signs every receipt, in the transaction that writes it, and the log's checkpoints. */
  signingKey: SigningKey;
  /** This gateway's metrics (shared/platform/metrics.ts); absent in a bare context built by a test: nothing is counted. */
  metrics?: GatewayMetrics;
  /** Money from outside (shared/payments/rails.ts): present only when HOLON_X402_NETWORK is set. */
  payments?: PaymentRails;
  /** This API process's budget leases (shared/ledger/leases/): present only when HOLON_BUDGET_LEASE is on. */
  leases?: LeaseManager;
}

/** A bare context's settings: the declared defaults (shared/platform/settings/). */
export const DEFAULT_SETTINGS: ServiceSettings = {
  resultTtlS: SETTINGS.resultTtlS.default,
  inputTtlS: SETTINGS.inputTtlS.default,
  streamResumeS: SETTINGS.streamResumeS.default,
  queueGraceS: 300,
  rankingMinPayers: SETTINGS.rankingMinPayers.default,
  payerRule: 'every_payer',
  logOrigin: DEFAULT_LOG_ORIGIN,
};

/** What a started role hands its composition root, in the order the root stops things (services/compose.ts). */
export interface StartedRole {
  /** First: stop taking new work (the API stops listening, watchers and sweeps stop). */
  stop: Array<() => Promise<void>>;
  /** Then, for every role together: workers finish what they run, or hand it back. */
  workers: Array<{ close(): Promise<void> }>;
  /** Last, once no worker runs: what the running work needed (pooled sessions, HTTP clients, limiters). */
  release: Array<() => Promise<void>>;
  /**
   * Called once the stop grace (HOLON_STOP_GRACE_S) has passed with work still running: end it now and hand it back
   * (a run ends `gateway_restarted`, an evaluation goes to another evaluator, a synchronous answer becomes a 202).
   */
  handBack?: Array<() => void>;
}
