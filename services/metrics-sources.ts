/**
 * What the scrape-time gauges of shared/platform/metrics.ts read in a gateway process: the depth of every queue
 * (the same in every process: they share Redis), the holds outstanding (Postgres) and this process's pool. The API
 * adds its MCP sessions (services/api/start.ts).
 */
import { CALLBACK_QUEUE, RUN_QUEUE, SETTLE_QUEUE } from '../shared/calls/wire.js';
import type { Db } from '../shared/db/connect.js';
import { poolUse } from '../shared/db/pool-use.js';
import { EVALUATE_QUEUE } from '../shared/evaluation/jobs.js';
import { holdsOutstanding } from '../shared/ledger/holds-outstanding.js';
import type { Messaging } from '../shared/messaging/types.js';
import { SCRAPE_TIMEOUT_MS, type GatewayMetrics } from '../shared/platform/metrics.js';
import { DELIVER_QUEUE } from '../shared/webhooks/deliveries.js';

const GATEWAY_QUEUES = [RUN_QUEUE, SETTLE_QUEUE, CALLBACK_QUEUE, DELIVER_QUEUE, EVALUATE_QUEUE] as const;

export function wireMetricSources(metrics: GatewayMetrics, db: Db, messaging: Messaging): void {
  metrics.sources.queues = () => Promise.all(GATEWAY_QUEUES.map(async (queue) => ({ queue, ...(await messaging.queues.counts(queue)) })));
  metrics.sources.holds = () => holdsOutstanding(db, SCRAPE_TIMEOUT_MS);
  metrics.sources.pool = () => poolUse(db);
}
