/**
 * Webhook deliveries (docs/webhooks.md): when a call names `callback_url`, the gateway POSTs `call.completed` once
 * the receipt exists, signed the Standard Webhooks way with the `standardwebhooks` library: `webhook-id` (the same on
 * every attempt), `webhook-timestamp`, `webhook-signature` (one `v1,<base64>` per signing secret of the account that
 * pays for the call; dev mode: the one local secret). A call whose agent asks its caller a question also gets
 * `call.input_required` for each question, sent the same way the moment it is asked (shared/webhooks/deliveries.ts
 * `openQuestionDelivery`, called by the run), its body read from the ephemeral store while the question is kept.
 *
 * Durable start: the settlement writes the delivery's row in its own transaction (the outbox). The `callback` job it
 * queues after the commit is only a fast wake-up: the delivery sweep (at start-up, then every minute for those overdue
 * by a minute) queues the attempt of every pending delivery that has no job, never-started ones included, so a
 * settler that died between the commit and the job loses nothing, on Redis and in process alike.
 *
 * Durable retries: every attempt is a job on the `deliver` queue ({callId, deliveryId, step | resend}: ids only),
 * the next one queued with the schedule's delay (shared/webhooks/schedule.ts), so a restarted settler carries on
 * where the last one stopped. Each attempt is bounded (the answer's headers within HOLON_WEBHOOK_FIRST_BYTE_TIMEOUT_MS,
 * 5 s; the whole attempt within HOLON_WEBHOOK_TIMEOUT_MS, 15 s) and logged (shared/webhooks/deliveries.ts).
 *
 * Fair delivery: an attempt POSTs only once the process's delivery slots let it (delivery-slots.ts: a cap per account,
 * round robin between accounts, a circuit breaker per receiver host). One it does not let through now is postponed:
 * its job goes back to the queue, delayed, under its own id, and nothing of the schedule is used.
 *
 * Redirects are never followed. In hosted mode every connection goes through the guarded client: loopback, private,
 * link-local, metadata and other reserved addresses are refused.
 *
 * The output of a succeeded call is kept for its delivery (shared/calls/answer/outputs.ts): an attempt reads it, and only a
 * successful attempt hands it over (deleted once every consumer the call declared has it: a synchronous answer, the
 * webhook), so a retry after a failure still carries it, within HOLON_RESULT_TTL_S. An attempt that finds it gone
 * still tells the receiver the call ended (its receipt, `output: null`, `output_expired: true`, and `output_gone`:
 * `collected` or `expired`), and the delivery log says why.
 */
import { request, type Dispatcher } from 'undici';
import type { JobResult } from '../../shared/messaging/types.js';
import { hostKey, hostOutcome, type HostOutcome } from '../../shared/webhooks/circuit-breaker.js';
import { deliverySlots, type DeliverySlots } from './delivery-slots.js';
import { loadReceiptTree } from '../../shared/receipts/store.js';
import { eventKey } from '../../shared/calls/wire.js';
import type { ServiceContext } from '../../shared/context.js';
import { handOutput, readOutput, type OutputGone } from '../../shared/calls/answer/outputs.js';
import type { WebhookSettings } from '../../shared/platform/config.js';
import { callCompleted, callInputRequired, webhookHeaders } from '../../shared/webhooks/payload.js';
import { pushMessage, pushTokenKey } from '../../shared/a2a/push.js';
import type { SealingKey } from '../../shared/crypto/seal.js';
import { parseRetryAfter, verdict, type AttemptResult } from '../../shared/webhooks/schedule.js';
import { attemptError } from '../../shared/webhooks/attempt-error.js';
import { webhookSecrets } from '../../shared/webhooks/secrets.js';
import { countSweep } from '../../shared/platform/metrics.js';
import { type Periodic, startPeriodic } from '../../shared/platform/periodic.js';
import {
  attemptQueued,
  enqueueAttempt,
  loadDelivery,
  noteDelivery,
  notePostponed,
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
  /** Who may POST now: this process's delivery slots. */
  slots: DeliverySlots;
  /** What A2A push tokens are sealed under (HOLON_FILE_SECRET). */
  pushKey?: SealingKey;
  dispatcher?: Dispatcher;
}

/** Attempts in flight at once in one settler process. */
export const DELIVERY_SLOTS = 16;

/** The slots of a process from the settings; an attempt waits for its turn at most the first-byte timeout (0.25–5 s). */
function slotsOf(settings: WebhookSettings, now: () => number): DeliverySlots {
  return deliverySlots({
    slots: DELIVERY_SLOTS,
    accountCap: settings.accountInFlight,
    breaker: { failures: settings.breakerFailures, coolDownMs: settings.breakerCoolDownMs },
    holdMs: Math.min(Math.max(settings.firstByteTimeoutMs, 250), 5_000),
    now,
  });
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
    slots: slotsOf(options.settings, ctx.now),
    ...(options.fileSecret ? { pushKey: pushTokenKey(options.fileSecret)! } : {}),
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  };
}

const enqueue = (ctx: ServiceContext, job: DeliverJob, delayMs = 0) => enqueueAttempt(ctx.messaging.queues, job, delayMs);

/** The `callback` job (the settlement's wake-up): queues the step the call's delivery is at (its row is the settlement's). */
export async function startDelivery(ctx: ServiceContext, callId: string): Promise<void> {
  const d = await openDelivery(ctx.db, callId);
  if (d?.state === 'pending') await queueCurrentStep(ctx, d);
}

const currentStep = (d: Delivery): DeliverJob => ({ callId: d.callId, deliveryId: d.id, step: d.stepsMade });

/** Queues the step a pending delivery is at, after what is left of its delay (a no-op while that job exists). */
async function queueCurrentStep(ctx: ServiceContext, d: Delivery): Promise<void> {
  const delayMs = d.nextAttemptAt ? Math.max(0, d.nextAttemptAt.getTime() - ctx.now()) : 0;
  await enqueue(ctx, currentStep(d), delayMs);
}

/**
 * One POST: the status and `Retry-After`, or why no answer came. Never follows a redirect; the body is not read.
 * The answer's headers must come within `firstByteTimeoutMs` (undici's headersTimeout, on whichever dispatcher: the
 * guarded client in hosted mode; default `timeoutMs`), the whole attempt within `timeoutMs`.
 */
export async function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { dispatcher?: Dispatcher; timeoutMs: number; firstByteTimeoutMs?: number; now: () => number },
): Promise<AttemptResult & { cause?: unknown }> {
  const firstByteMs = options.firstByteTimeoutMs ?? options.timeoutMs;
  try {
    const res = await request(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'user-agent': 'holon-webhooks/1', ...headers },
      // Only when shorter than the attempt's own bound, which otherwise says what happened.
      ...(firstByteMs < options.timeoutMs ? { headersTimeout: firstByteMs } : {}),
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

/**
 * One `deliver` job: an attempt of the schedule or a re-send. Idempotent: the delivery row decides. Answers a
 * postponement when the delivery slots do not let it through now (nothing recorded, nothing of the schedule used).
 */
export async function runDeliverJob(ctx: ServiceContext, job: DeliverJob, runtime: WebhookRuntime): Promise<JobResult> {
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
  if (!call?.callback_url) return;
  // A task's A2A push config (shared/a2a/push.ts) sends A2A's push body instead of Holon's events.
  const push = await pushMessage(ctx, runtime.pushKey, d);
  if (push.kind === 'unsendable') return void (await noteDelivery(ctx.db, d.id, push.reason));
  const message = push.kind === 'push' ? push : d.event === 'call.input_required' ? await questionMessage(ctx, d) : await completedMessage(ctx, d);
  if (!message) return;
  const slot = await runtime.slots.acquire({
    key: 'step' in job ? `${d.id}-s${job.step}` : `${d.id}-r${job.resend}`,
    account: d.account,
    host: hostKey(call.callback_url) ?? call.callback_url,
  });
  if (slot.kind === 'postpone') {
    await notePostponed(ctx.db, job, new Date(ctx.now() + slot.ms));
    ctx.metrics?.webhookAttempts.inc({ verdict: 'postponed' });
    return { postponeMs: slot.ms };
  }
  let outcome: HostOutcome = 'neutral';
  try {
    outcome = await attempt(ctx, { job, d, callbackUrl: call.callback_url, message }, runtime);
  } finally {
    slot.release(outcome);
  }
}

/** What one delivery sends (its own headers beside the signature's), and what it hands over (a success's output, to the webhook consumer). */
interface Message {
  body: string;
  headers?: Record<string, string>;
  delivered?: () => Promise<void>;
}

/** `call.completed`: the receipt, and a success's output while it is kept (read, not taken: a retry sends it again). */
async function completedMessage(ctx: ServiceContext, d: Delivery): Promise<Message | undefined> {
  const receipt = await loadReceiptTree(ctx.db, d.callId);
  if (!receipt) return undefined;
  let output: unknown = null;
  let outputGone: OutputGone | undefined;
  if (receipt.status === 'succeeded') {
    const state = await readOutput(ctx, d.callId);
    if (state.kept) output = state.output;
    else {
      outputGone = state.gone;
      await noteDelivery(ctx.db, d.id, OUTPUT_GONE[state.gone]);
    }
  }
  const body = callCompleted({ callId: d.callId, status: receipt.status, createdAt: d.createdAt, output, ...(outputGone ? { outputGone } : {}), receipt });
  // Delivered: the receiver has the output; it is no longer kept for the webhook (deleted when no other consumer
  // the call declared still needs it). A final failure (gone, gave up) hands nothing over: the output stays for a
  // re-send until its TTL.
  const handsOver = receipt.status === 'succeeded' && outputGone === undefined;
  return { body, ...(handsOver ? { delivered: async () => void (await handOutput(ctx, d.callId, 'webhook')) } : {}) };
}

/** `call.input_required`: the question the call waits on (its words and schema, from the store while it is kept). */
async function questionMessage(ctx: ServiceContext, d: Delivery): Promise<Message | undefined> {
  const text = await ctx.messaging.store.peek(eventKey(d.callId, d.question));
  if (text === undefined) {
    await noteDelivery(ctx.db, d.id, 'the question is no longer kept (answered long ago, or past its time)');
    return undefined;
  }
  return { body: callInputRequired({ callId: d.callId, question: d.question, request: JSON.parse(text) as unknown, createdAt: d.createdAt }) };
}

/** The attempt itself, once it has a slot: the POST, its record, the next step queued. How it counts for its host. */
async function attempt(
  ctx: ServiceContext,
  { job, d, callbackUrl, message }: { job: DeliverJob; d: Delivery; callbackUrl: string; message: Message },
  runtime: WebhookRuntime,
): Promise<HostOutcome> {
  const { body } = message;
  const secrets = await runtime.secretsOf(d.account);
  const at = new Date(ctx.now());
  const result: AttemptResult =
    secrets.length === 0
      ? { error: NO_SECRET_ERROR }
      : await postWebhook(
          callbackUrl,
          body,
          { ...webhookHeaders(secrets, d.id, at, body), ...message.headers },
          {
            timeoutMs: runtime.settings.attemptTimeoutMs,
            firstByteTimeoutMs: runtime.settings.firstByteTimeoutMs,
            now: ctx.now,
            ...(runtime.dispatcher ? { dispatcher: runtime.dispatcher } : {}),
          },
        );
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
  if (v.kind === 'delivered') await message.delivered?.();
  if (recorded.next) await enqueue(ctx, { callId: d.callId, deliveryId: d.id, step: recorded.next.step }, recorded.next.delayMs);
  return hostOutcome(result, secrets.length > 0);
}

/**
 * Queues the current step of pending deliveries that have no job (waiting, delayed or running), after what is left of
 * its delay; the count of those queued is what it answers. Every pending delivery, or only those overdue by
 * `overdueMs`. It finds the deliveries whose job was lost: the in-process queue's, which died with the process; a
 * never-started one whose settler died between the settlement's commit and the wake-up; one whose next job Redis lost
 * between the log and the queue. A delivery queued twice still sends once: the job id dedupes while the job exists,
 * and a job for a step already made only queues the step after it (runDeliverJob).
 */
export async function recoverDeliveries(ctx: ServiceContext, overdueMs?: number): Promise<number> {
  const pending = await pendingDeliveries(ctx.db, overdueMs);
  let queued = 0;
  for (const d of pending) {
    if (await attemptQueued(ctx.messaging.queues, currentStep(d))) continue;
    await queueCurrentStep(ctx, d);
    queued++;
  }
  countSweep(ctx.metrics, 'deliveries_requeued', queued);
  return queued;
}

/** The settler's delivery sweep: at start-up every pending delivery, then every minute those overdue by a minute. */
export function startDeliverySweep(ctx: ServiceContext, everyMs = 60_000): Periodic {
  let started = false;
  const sweep = async () => {
    await recoverDeliveries(ctx, started ? everyMs : undefined);
    started = true;
  };
  return startPeriodic(ctx.log, sweep, { everyMs, atStart: true, failure: 'webhook delivery sweep failed; trying again in a minute' });
}
