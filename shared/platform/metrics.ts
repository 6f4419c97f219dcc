/**
 * The gateway's metrics, every definition in this one file (docs/operating.md, "Metrics, traces and logs"). One
 * prom-client Registry per started gateway (services/compose.ts), never the global one: several gateways can run in
 * one process (tests) without "already registered" errors. Served as Prometheus text by GET /metrics on the API and
 * on the metrics port (shared/platform/metrics-server.ts).
 *
 * Labels come from small closed sets only: status, error code (the gateway's own codes; any code an agent chose is
 * `agent_declared`), queue, runtime kind, surface, outcome, rule, action, verdict, currency, agent id. Never a
 * mandate id, a key, an account, an input or a URL.
 *
 * On the paid-call path a metric is one counter increment or one histogram observation: no query, no await. What is
 * read from Postgres or Redis (holds outstanding, queue depth) is read when scraped, at most every SCRAPE_CACHE_MS,
 * and a read that takes longer than SCRAPE_TIMEOUT_MS keeps the last value (and counts in holon_scrape_errors_total),
 * so a slow database never hangs a scrape.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { RESERVED_ERROR_CODES } from '../core/manifest/types.js';

interface QueueDepth {
  queue: string;
  waiting: number;
  active: number;
  delayed: number;
}

export interface HoldsOutstanding {
  currency: string;
  count: number;
  /** Micro-units of the currency. */
  micros: bigint;
}

export interface PoolUse {
  used: number;
  free: number;
  pendingAcquires: number;
  max: number;
}

/** What the scrape-time gauges read: set by the composition root (and the API) for what this process has. */
interface ScrapeSources {
  queues?: () => Promise<QueueDepth[]>;
  holds?: () => Promise<HoldsOutstanding[]>;
  pool?: () => PoolUse | undefined;
  mcpSessions?: () => number;
}

export interface GatewayMetrics {
  readonly registry: Registry;
  /** Receipts written: settled calls (after the commit) and refusals. */
  readonly calls: Counter<'status' | 'error_code' | 'agent'>;
  /** A call asked for, request to answer, by surface (`rest`: POST /v0/calls; `mcp`: call_agent) and outcome class (callOutcomeClass). */
  readonly callRequestSeconds: Histogram<'surface' | 'outcome'>;
  /** The agent's run in the runner, by runtime kind and outcome kind. */
  readonly runSeconds: Histogram<'runtime' | 'outcome'>;
  /** A job's first delivery: from when it was due to when a worker took it. */
  readonly queueWaitSeconds: Histogram<'queue'>;
  /** From the hand-off to the settler (settle_enqueued_at) to the commit. */
  readonly settleLagSeconds: Histogram;
  /** What the background sweeps did, by action (SweeperAction). */
  readonly sweeperActions: Counter<'action'>;
  /** Evaluation cases judged, by outcome (passed, failed, unreachable). */
  readonly evaluationCases: Counter<'outcome'>;
  /** An evaluation, from its start to its end (`duration_ms`), by its status (passed, failed, error). */
  readonly evaluationSeconds: Histogram<'status'>;
  readonly webhookAttempts: Counter<'verdict'>;
  readonly rateLimitRefusals: Counter<'rule'>;
  readonly scrapeErrors: Counter<'source'>;
  readonly sources: ScrapeSources;
  readonly contentType: string;
  /** The Prometheus text of every metric. */
  text(): Promise<string>;
}

const SCRAPE_CACHE_MS = 5_000;
export const SCRAPE_TIMEOUT_MS = 2_000;

const GATEWAY_CODES: ReadonlySet<string> = new Set(RESERVED_ERROR_CODES);

/** The error_code label of a settled call: none for a success, the gateway's own codes as they are, else `agent_declared`. */
export function runErrorLabel(code: string | undefined): string {
  if (!code) return 'none';
  return GATEWAY_CODES.has(code) ? code : 'agent_declared';
}

/**
 * Every action a background sweep counts in `holon_sweeper_actions_total`: the sweeper's (calls handed out again or
 * closed, settlements handed out again, approvals expired), restart recovery's, the file sweep's, the delivery
 * sweep's, retention's and the evaluator's recovery sweep's.
 */
export type SweeperAction =
  | 'requeued'
  | 'abandoned'
  | 'closed'
  | 'resettled'
  | 'approvals_expired'
  | 'restart_closed'
  | 'restart_resettled'
  | 'files_deleted'
  | 'deliveries_requeued'
  | 'deliveries_deleted'
  | 'tasks_deleted'
  | 'events_deleted'
  | 'evaluations_requeued';

/** Counts `n` of a sweep's `action` (nothing for 0, so an action shows once it happened). */
export function countSweep(metrics: GatewayMetrics | undefined, action: SweeperAction, n: number): void {
  if (n > 0) metrics?.sweeperActions.inc({ action }, n);
}

/** The outcome label of a call request from its HTTP status (services/api/routes/calls/answers.ts decides the status; MCP maps its answers to one). */
export function callOutcomeClass(status: number): string {
  if (status === 200) return 'succeeded';
  if (status === 202) return 'pending';
  if (status === 502) return 'failed';
  if (status >= 400 && status < 500) return 'refused';
  return status >= 500 ? 'error' : 'other';
}

export function createMetrics(options: { role: string; cacheMs?: number; timeoutMs?: number }): GatewayMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ role: options.role });
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const sources: ScrapeSources = {};
  const reads = scrapeReads(sources, { ttlMs: options.cacheMs ?? SCRAPE_CACHE_MS, timeoutMs: options.timeoutMs ?? SCRAPE_TIMEOUT_MS });
  registerScrapeGauges(registers, sources, reads);
  // Registered after the gauges, and waits for their reads: a scrape shows the errors of its own reads.
  registry.registerMetric(reads.scrapeErrors);
  return {
    registry,
    sources,
    scrapeErrors: reads.scrapeErrors,
    ...callPathMetrics(registers),
    contentType: registry.contentType,
    text: () => registry.metrics(),
  };
}

/** The cached scrape-time reads of Postgres and Redis, and the counter of those that failed or timed out. */
interface ScrapeReads {
  queues: () => Promise<QueueDepth[] | undefined>;
  holds: () => Promise<HoldsOutstanding[] | undefined>;
  scrapeErrors: Counter<'source'>;
}

function scrapeReads(sources: ScrapeSources, timing: { ttlMs: number; timeoutMs: number }): ScrapeReads {
  const scrapeErrors = new Counter({
    name: 'holon_scrape_errors_total',
    help: 'Scrape-time reads that failed or timed out (the last value was kept)',
    labelNames: ['source'],
    // Registered by createMetrics, after the gauges that read.
    registers: [],
    async collect() {
      await Promise.all([queues(), holds()]);
    },
  });
  const read = <T>(source: string, fn: () => Promise<T> | undefined) => cachedRead(fn, { ...timing, failed: () => scrapeErrors.inc({ source }) });
  const queues = read('queues', () => sources.queues?.());
  const holds = read('holds', () => sources.holds?.());
  return { queues, holds, scrapeErrors };
}

/** The gauges read when scraped: queue depth, holds outstanding, the Postgres pool, MCP sessions (in this order). */
function registerScrapeGauges(registers: Registry[], sources: ScrapeSources, reads: ScrapeReads): void {
  new Gauge({
    name: 'holon_queue_jobs',
    help: 'Jobs per queue and state (waiting, active, delayed); the same in every process: aggregate with max',
    labelNames: ['queue', 'state'],
    registers,
    async collect() {
      const depth = await reads.queues();
      if (!depth) return;
      this.reset();
      for (const d of depth) for (const state of ['waiting', 'active', 'delayed'] as const) this.set({ queue: d.queue, state }, d[state]);
    },
  });
  registerHoldsGauges(registers, reads.holds);
  registerPoolGauges(registers, sources);
  new Gauge({
    name: 'holon_mcp_sessions',
    help: 'MCP sessions open in this API process',
    registers,
    collect() {
      if (sources.mcpSessions) this.set(sources.mcpSessions());
    },
  });
}

function registerHoldsGauges(registers: Registry[], holds: ScrapeReads['holds']): void {
  // A currency once held reports 0 when nothing is held any more (the query only sees live holds).
  const currencies = new Set<string>();
  const holdsGauge = (name: string, help: string, pick: (h: HoldsOutstanding) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['currency'],
      registers,
      async collect() {
        const rows = await holds();
        if (!rows) return;
        for (const r of rows) currencies.add(r.currency);
        for (const currency of currencies) this.set({ currency }, 0);
        for (const r of rows) this.set({ currency: r.currency }, pick(r));
      },
    });
  holdsGauge('holon_holds_outstanding', 'Holds not yet settled or released, per currency; the same in every process: aggregate with max', (h) => h.count);
  holdsGauge('holon_holds_outstanding_micros', 'Sum of the holds not yet settled or released, micro-units per currency', (h) => Number(h.micros));
}

function registerPoolGauges(registers: Registry[], sources: ScrapeSources): void {
  new Gauge({
    name: 'holon_db_pool_connections',
    help: 'Postgres connections of this process: used and free',
    labelNames: ['state'],
    registers,
    collect() {
      const p = sources.pool?.();
      if (p) for (const state of ['used', 'free'] as const) this.set({ state }, p[state]);
    },
  });
  new Gauge({
    name: 'holon_db_pool_pending_acquires',
    help: 'Queries of this process waiting for a Postgres connection',
    registers,
    collect() {
      const p = sources.pool?.();
      if (p) this.set(p.pendingAcquires);
    },
  });
  new Gauge({
    name: 'holon_db_pool_max',
    help: 'Largest Postgres pool of this process (HOLON_DB_POOL)',
    registers,
    collect() {
      const p = sources.pool?.();
      if (p) this.set(p.max);
    },
  });
}

/** The metrics of the paid-call path and the background roles: one increment or one observation each, no await. */
function callPathMetrics(registers: Registry[]) {
  return {
    calls: new Counter({
      name: 'holon_calls_total',
      help: 'Receipts written, by status and error code',
      labelNames: ['status', 'error_code', 'agent'],
      registers,
    }),
    callRequestSeconds: new Histogram({
      name: 'holon_call_request_duration_seconds',
      help: 'A call asked for, request to answer, by surface (rest: POST /v0/calls, mcp: call_agent) and outcome (succeeded, pending, refused, failed, error)',
      labelNames: ['surface', 'outcome'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    runSeconds: new Histogram({
      name: 'holon_run_duration_seconds',
      help: "An agent's run in the runner, by runtime kind and outcome kind",
      labelNames: ['runtime', 'outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    }),
    queueWaitSeconds: new Histogram({
      name: 'holon_queue_wait_seconds',
      help: "A job's first delivery: from when it was due to when a worker took it",
      labelNames: ['queue'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
      registers,
    }),
    settleLagSeconds: new Histogram({
      name: 'holon_settle_lag_seconds',
      help: 'From the hand-off to the settler to the settlement committed',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    sweeperActions: new Counter({
      name: 'holon_sweeper_actions_total',
      help: "The background sweeps' actions: calls and settlements nobody finished, approvals expired, restart recovery, files, deliveries, retention, evaluations",
      labelNames: ['action'],
      registers,
    }),
    evaluationCases: new Counter({
      name: 'holon_evaluation_cases_total',
      help: 'Evaluation cases judged, by outcome (passed, failed, unreachable: the agent could not be reached)',
      labelNames: ['outcome'],
      registers,
    }),
    evaluationSeconds: new Histogram({
      name: 'holon_evaluation_duration_seconds',
      help: 'An evaluation, from its first claim to its end (a resumed one included), by status (passed, failed, error)',
      labelNames: ['status'],
      buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
      registers,
    }),
    webhookAttempts: new Counter({ name: 'holon_webhook_attempts_total', help: 'Webhook delivery attempts by verdict', labelNames: ['verdict'], registers }),
    rateLimitRefusals: new Counter({
      name: 'holon_rate_limit_refusals_total',
      help: 'Requests refused 429 by a rate limit, by rule',
      labelNames: ['rule'],
      registers,
    }),
  };
}

/**
 * `fn`'s last value, read again at most every `ttlMs` (concurrent scrapes share one read); a read that fails or
 * outlasts `timeoutMs` keeps the value before it. Undefined until a first read succeeded (or without a source).
 */
function cachedRead<T>(fn: () => Promise<T> | undefined, o: { ttlMs: number; timeoutMs: number; failed(): void }): () => Promise<T | undefined> {
  let value: T | undefined;
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<T | undefined> | undefined;
  return () => {
    if (Date.now() - readAt < o.ttlMs) return Promise.resolve(value);
    reading ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const pending = fn();
        if (pending === undefined) return undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('scrape read timed out')), o.timeoutMs);
          timer.unref();
        });
        value = await Promise.race([pending, late]);
        readAt = Date.now();
      } catch {
        o.failed();
      } finally {
        clearTimeout(timer);
        reading = undefined;
      }
      return value;
    })();
    return reading;
  };
}
