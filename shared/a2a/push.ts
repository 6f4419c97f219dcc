/**
 * A2A push notifications (docs/a2a.md, "Push notifications"), delivered by the gateway's webhook machinery: a task's
 * push config makes its URL the call's `callback_url`, so the settlement's outbox opens the delivery and the settler
 * sends it with retries, through the guarded client in hosted mode, signed the Standard Webhooks way; this module says
 * what the delivery carries instead of `call.completed`: A2A's push body (the task, or an input-required status
 * update, as `StreamResponse` JSON, `application/a2a+json`) and the client's token in `X-A2A-Notification-Token`.
 *
 * One config per task. The token is kept sealed (AES-256-GCM under HOLON_FILE_SECRET, the call id as AAD), never
 * shown again. A config set while the call runs is carried by the settlement; one set as it settles or after is
 * opened here once the receipt exists (the delivery's id is the call's, so it is opened once either way).
 */
import { StreamResponse, TaskState } from '@a2a-js/sdk';
import type { ServiceContext } from '../context.js';
import type { Db, Queryable } from '../db/connect.js';
import { fromColumns, type SealingKey, seal, sealingKey, toColumns, unseal } from '../crypto/seal.js';
import { type Delivery, enqueueAttempt, insertDeliveries, newDelivery } from '../webhooks/deliveries.js';
import { agentMessage, taskOf } from './task-view.js';

const PUSH_TOKEN_HEADER = 'X-A2A-Notification-Token';
const A2A_CONTENT_TYPE = 'application/a2a+json';

export interface PushConfig {
  id: string;
  url: string;
  token?: string;
}

/** The key push tokens are sealed under (HOLON_FILE_SECRET); none: configs cannot carry a token. */
export const pushTokenKey = (fileSecret: string | undefined): SealingKey | undefined =>
  fileSecret ? sealingKey(fileSecret, 'holon a2a push token v1') : undefined;

interface Row {
  call_id: string;
  config_id: string;
  url: string;
  base: string;
  key_id: string | null;
  iv: Buffer | null;
  ciphertext: Buffer | null;
  tag: Buffer | null;
}

/** The task's config as shown to its owner: never its token. */
export async function pushConfigOf(db: Queryable, callId: string): Promise<{ id: string; url: string } | undefined> {
  const row = (await db('a2a_push_configs').where({ call_id: callId }).first('config_id', 'url')) as Pick<Row, 'config_id' | 'url'> | undefined;
  return row ? { id: row.config_id, url: row.url } : undefined;
}

/**
 * Sets the task's config (one per task: another id is refused, the same id replaces it) and makes its URL the
 * call's callback. `false`: the task has another config already.
 */
export async function setPushConfig(
  ctx: ServiceContext,
  key: SealingKey | undefined,
  p: { callId: string; config: PushConfig; base: string },
): Promise<boolean> {
  const { callId, config } = p;
  const token = config.token ? toColumns(seal(key!, callId, config.token)) : { key_id: null, iv: null, ciphertext: null, tag: null };
  const status = await ctx.db.transaction(async (trx) => {
    const existing = (await trx('a2a_push_configs').where({ call_id: callId }).forUpdate().first('config_id')) as { config_id: string } | undefined;
    if (existing && existing.config_id !== config.id) return 'taken' as const;
    await trx('a2a_push_configs')
      .insert({ call_id: callId, config_id: config.id, url: config.url, base: p.base, ...token })
      .onConflict('call_id')
      .merge();
    const r = await trx.raw<{ rows: Array<{ status: string }> }>(`UPDATE calls SET callback_url = ? WHERE id = ? RETURNING status`, [config.url, callId]);
    return r.rows[0]?.status ?? 'none';
  });
  if (status === 'taken') return false;
  // Set as (or after) the call settles: the settlement may have read no callback; once the receipt exists, the
  // delivery is opened here unless the settlement did (same id).
  if (status !== 'queued' && status !== 'running') void openLate(ctx, callId);
  return true;
}

async function openLate(ctx: ServiceContext, callId: string): Promise<void> {
  try {
    for (let i = 0; i < 600; i++) {
      const call = (await ctx.db('calls as c').join('receipts as r', 'r.id', 'c.id').where('c.id', callId).first('c.payer')) as { payer: string } | undefined;
      if (call) {
        const d = newDelivery(callId, call.payer);
        await insertDeliveries(ctx.db, [d]);
        await enqueueAttempt(ctx.messaging.queues, { callId, deliveryId: d.id, step: 0 });
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (e) {
    ctx.log.warn({ call: callId, err: { message: (e as Error).message } }, 'a late A2A push config could not open its delivery');
  }
}

/** Removes the task's config and the call's callback with it: nothing is pushed after this. */
export async function deletePushConfig(db: Db, callId: string, configId: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    // Counted from RETURNING: PGlite reports no affected count for a plain delete.
    const gone = (await trx('a2a_push_configs').where({ call_id: callId, config_id: configId }).delete().returning('call_id')) as unknown[];
    // Whatever the call's state: a delivery opened meanwhile finds no callback and sends nothing (never Holon's body).
    if (gone.length > 0) await trx('calls').where({ id: callId }).update({ callback_url: null });
    return gone.length > 0;
  });
}

/** What a delivery of a call sends when its task has an A2A push config. */
export type PushMessage =
  | { kind: 'none' }
  | { kind: 'push'; body: string; headers: Record<string, string> }
  /** A push that cannot be sent as it should: nothing is sent. */
  | { kind: 'unsendable'; reason: string };

/** What a delivery of an A2A push sends: the body, its headers (content type, the token); `none`: not a push. */
export async function pushMessage(ctx: ServiceContext, key: SealingKey | undefined, d: Pick<Delivery, 'callId' | 'event' | 'question'>): Promise<PushMessage> {
  const row = (await ctx.db('a2a_push_configs').where({ call_id: d.callId }).first()) as Row | undefined;
  if (!row) return { kind: 'none' };
  const owned = (await ctx.db('mcp_tasks').where({ call_id: d.callId }).first('context_id')) as { context_id: string | null } | undefined;
  const t = { ctx, base: row.base, contextId: owned?.context_id ?? d.callId };
  let response: StreamResponse;
  if (d.event === 'call.input_required') {
    const task = await taskOf(t, d.callId);
    const message = task?.status?.message ?? agentMessage(d.callId, 'the agent asks a question');
    response = {
      payload: {
        $case: 'statusUpdate',
        value: {
          taskId: d.callId,
          contextId: t.contextId,
          status: { state: TaskState.TASK_STATE_INPUT_REQUIRED, message, timestamp: new Date().toISOString() },
          metadata: { 'holon/question': d.question },
        },
      },
    };
  } else {
    const task = await taskOf(t, d.callId);
    if (!task) return { kind: 'unsendable', reason: 'the task is not there' };
    response = { payload: { $case: 'task', value: task } };
  }
  const headers: Record<string, string> = { 'content-type': A2A_CONTENT_TYPE };
  if (row.key_id !== null && row.ciphertext !== null) {
    // A token that cannot be opened here (no HOLON_FILE_SECRET, or another one): nothing is sent without it.
    const unsendable = { kind: 'unsendable' as const, reason: 'the A2A push token cannot be opened here (HOLON_FILE_SECRET)' };
    if (!key) return unsendable;
    try {
      headers[PUSH_TOKEN_HEADER] = unseal(key, d.callId, fromColumns({ key_id: row.key_id, iv: row.iv!, ciphertext: row.ciphertext, tag: row.tag! }));
    } catch {
      return unsendable;
    }
  }
  return { kind: 'push', body: JSON.stringify(StreamResponse.toJSON(response)), headers };
}
