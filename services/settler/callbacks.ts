/**
 * Webhook deliveries (docs/webhooks.md): when a call names `callback_url`, the gateway POSTs `call.completed` once
 * the receipt exists (the settler queues a `callback` job after the commit), signed the Standard Webhooks way with
 * the `standardwebhooks` library: `webhook-id` (the same on every attempt), `webhook-timestamp`, `webhook-signature`
 * (one `v1,<base64>` per signing secret of the account that pays for the call; dev mode: the one local secret).
 *
 * Durable retries: every attempt is a job on the `deliver` queue ({callId, deliveryId, step | resend}: ids only),
 * the next one queued with the schedule's delay (shared/webhooks/schedule.ts), so a restarted settler carries on
 * where the last one stopped. Each attempt is bounded (HOLON_WEBHOOK_TIMEOUT_MS, 15 s) and logged
 * (shared/webhooks/deliveries.ts). Redirects are never followed. In hosted mode every connection goes through the
 * guarded client: loopback, private, link-local, metadata and other reserved addresses are refused.
 *
 * The output of a succeeded call is kept for its delivery (shared/calls/outputs.ts): an attempt reads it, and only a
 * successful attempt hands it over (deleted once every consumer the call declared has it: a synchronous answer, the
 * webhook), so a retry after a failure still carries it, within HOLON_RESULT_TTL_S. An attempt that finds it gone
 * still tells the receiver the call ended (its receipt, `output: null`, `output_expired: true`, and `output_gone`:
 * `collected` or `expired`), and the delivery log says why.
 */
import { request, type Dispatcher } from 'undici';
import { loadReceiptTree } from '../../shared/receipts/store.js';
import type { ServiceContext } from '../../shared/context.js';
import { handOutput, readOutput, type OutputGone } from '../../shared/calls/outputs.js';
import type { WebhookSettings } from '../../shared/platform/config.js';
import { callCompleted, webhookHeaders } from '../../shared/webhooks/payload.js';
import { parseRetryAfter, verdict, type AttemptResult } from '../../shared/webhooks/schedule.js';
import { attemptError } from '../../shared/webhooks/attempt-error.js';
import { webhookSecrets } from '../../shared/webhooks/secrets.js';
import {
  enqueueAttempt,
  loadDelivery,
  noteDelivery,
  openDelivery,
  pendingDeliveries,
  recordAttempt,
  type DeliverJob,
  type Delivery,
} from '../../shared/webhooks/deliveries.js';

const NO_SECRET_ERROR = 'the account has no webhook secret yet: POST /v0/webhooks/secret/rotate makes one (docs/webhooks.md)';
/** The delivery's `reason` when an attempt found the output gone, by why. */
const OUTPUT_GONE: Readonly<Record<OutputGone, string>> = {
  expired: 'the output was no longer kept: HOLON_RESULT_TTL_S ended before this attempt (output_gone: expired)',
  collected: 'the output was no longer kept: every consumer the call declared had it already, this webhook included (output_gone: collected)',
};

/** How the settler signs and times deliveries. */
export interface WebhookRuntime {
  settings: WebhookSettings;
  /** The secrets that sign an account's deliveries now, newest first. */
  secretsOf(account: string): Promise<string[]>;
  dispatcher?: Dispatcher;
}

/** Hosted: each account's own secrets (under HOLON_FILE_SECRET). Dev: the one local secret. */
export function webhookRuntime(
  ctx: ServiceContext,
  options: { hosted: boolean; devSecret: string; fileSecret?: string; settings: WebhookSettings; dispatcher?: Dispatcher },
): WebhookRuntime {
  const store = webhookSecrets(options.fileSecret, options.settings.rotationWindowS);
  return {
    settings: options.settings,
    secretsOf: options.hosted ? (account) => store.signing(ctx.db, account) : async () => [options.devSecret],
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  };
}

const enqueue = (ctx: ServiceContext, job: DeliverJob, delayMs = 0) => enqueueAttempt(ctx.messaging.queues, job, delayMs);

/** The `callback` job (queued by the settlement): opens the call's delivery and queues its first attempt. */
export async function startDelivery(ctx: ServiceContext, callId: string): Promise<void> {
  const d = await openDelivery(ctx.db, callId);
  if (d?.state === 'pending') await queueCurrentStep(ctx, d);
}

/** Queues the step a pending delivery is at, after what is left of its delay (a no-op while that job exists). */
async function queueCurrentStep(ctx: ServiceContext, d: Delivery): Promise<void> {
  const delayMs = d.nextAttemptAt ? Math.max(0, d.nextAttemptAt.getTime() - ctx.now()) : 0;
  await enqueue(ctx, { callId: d.callId, deliveryId: d.id, step: d.stepsMade }, delayMs);
}

/** One POST: the status and `Retry-After`, or why no answer came. Never follows a redirect; the body is not read. */
export async function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { dispatcher?: Dispatcher; timeoutMs: number; now: () => number },
): Promise<AttemptResult & { cause?: unknown }> {
  try {
    const res = await request(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'user-agent': 'holon-webhooks/1', ...headers },
      signal: AbortSignal.timeout(options.timeoutMs),
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    await res.body.dump();
    const retryAfterMs = parseRetryAfter(res.headers['retry-after'], options.now());
    return { statusCode: res.statusCode, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  } catch (e) {
    return { error: attemptError(e, url), cause: e };
  }
}

/** One `deliver` job: an attempt of the schedule or a re-send. Idempotent: the delivery row decides. */
export async function runDeliverJob(ctx: ServiceContext, job: DeliverJob, runtime: WebhookRuntime): Promise<void> {
  const d = await loadDelivery(ctx.db, job.deliveryId);
  if (!d) return;
  if ('step' in job) {
    if (d.state !== 'pending' || job.step !== d.stepsMade) {
      // A duplicate of a step already made: make sure the step after it is queued (lost if a settler died between).
      if (d.state === 'pending' && job.step < d.stepsMade) await queueCurrentStep(ctx, d);
      return;
    }
  } else if (job.resend <= d.resendsMade) return;

  const call = await ctx.db('calls').where({ id: d.callId }).first('callback_url');
  const receipt = await loadReceiptTree(ctx.db, d.callId);
  if (!call?.callback_url || !receipt) return;
  let output: unknown = null;
  let outputGone: OutputGone | undefined;
  if (receipt.status === 'succeeded') {
    // Read, not taken: the output stays for a retry until an attempt succeeds.
    const state = await readOutput(ctx, d.callId);
    if (state.kept) output = state.output;
    else {
      outputGone = state.gone;
      await noteDelivery(ctx.db, d.id, OUTPUT_GONE[state.gone]);
    }
  }
  const body = callCompleted({ callId: d.callId, status: receipt.status, createdAt: d.createdAt, output, ...(outputGone ? { outputGone } : {}), receipt });
  const secrets = await runtime.secretsOf(d.account);
  const at = new Date(ctx.now());
  const result: AttemptResult =
    secrets.length === 0
      ? { error: NO_SECRET_ERROR }
      : await postWebhook(call.callback_url, body, webhookHeaders(secrets, d.id, at, body), {
          timeoutMs: runtime.settings.attemptTimeoutMs,
          now: ctx.now,
          ...(runtime.dispatcher ? { dispatcher: runtime.dispatcher } : {}),
        });
  const durationMs = ctx.now() - at.getTime();
  const schedule = runtime.settings.scheduleMs;
  const v = verdict(schedule, 'step' in job ? job.step : schedule.length, result);
  ctx.metrics?.webhookAttempts.inc({ verdict: v.kind });
  const recorded = await recordAttempt(ctx.db, {
    job,
    at,
    durationMs,
    ...('statusCode' in result ? { statusCode: result.statusCode } : { error: result.error }),
    verdict: v,
  });
  // Never the URL (it may carry a token) nor a secret.
  ctx.log.info(
    {
      callId: d.callId,
      deliveryId: d.id,
      attempt: recorded.attempt,
      ...('statusCode' in result ? { status: result.statusCode } : { error: result.error }),
      verdict: v.kind,
    },
    'webhook attempt',
  );
  // Delivered: the receiver has the output; it is no longer kept for the webhook (deleted when no other consumer
  // the call declared still needs it). A final failure (gone, gave up) hands nothing over: the output stays for a
  // re-send until its TTL.
  if (v.kind === 'delivered' && receipt.status === 'succeeded' && outputGone === undefined) await handOutput(ctx, d.callId, 'webhook');
  if (recorded.next) await enqueue(ctx, { callId: d.callId, deliveryId: d.id, step: recorded.next.step }, recorded.next.delayMs);
}

/**
 * Queues the current step of pending deliveries again (a no-op for those whose job exists: same job id). With the
 * in-process queue, delayed attempts die with the process: at start-up every pending delivery is queued again, after
 * what is left of its delay. With Redis the delayed jobs survive on their own; the settler's sweep still queues
 * again a delivery overdue by `overdueMs`, in case its job was lost (Redis failed between the log and the queue).
 */
export async function recoverDeliveries(ctx: ServiceContext, overdueMs?: number): Promise<number> {
  const pending = await pendingDeliveries(ctx.db, overdueMs);
  for (const d of pending) await queueCurrentStep(ctx, d);
  return pending.length;
}

/** The settler's sweep for lost attempts: every minute, deliveries overdue by more than a minute. */
export function startDeliverySweep(ctx: ServiceContext, everyMs = 60_000): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = recoverDeliveries(ctx, everyMs).catch((e: unknown) =>
      ctx.log.warn({ err: { message: (e as Error)?.message } }, 'webhook delivery sweep failed; trying again in a minute'),
    );
  }, everyMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
