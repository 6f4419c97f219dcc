/**
 * Remote agents delegate through `POST /v0/calls` with a token valid only for their run (gateway.md §3):
 * minted by the runner at run start, stored hashed in the ephemeral store for the run's timeout, revoked when
 * the run ends, and turned back into the running parent by the API.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ServiceContext } from '../context.js';
import { loadMandate } from '../mandates/store.js';
import type { ParentRun } from './submit/types.js';

const tokenKey = (token: string) => `delegation:${createHash('sha256').update(token).digest('hex')}`;

/** A token valid only for this run (and only under its sub-mandate): stored hashed, for the run's timeout. */
export async function mintDelegationToken(ctx: ServiceContext, callId: string, ttlSeconds: number): Promise<string> {
  const token = `hld_${randomBytes(24).toString('base64url')}`;
  await ctx.messaging.store.put(tokenKey(token), callId, ttlSeconds);
  return token;
}

export async function revokeDelegationToken(ctx: ServiceContext, token: string): Promise<void> {
  await ctx.messaging.store.delete(tokenKey(token));
}

/** The running parent a delegation token stands for, or null (unknown, expired, or the run has ended). */
export async function parentOfToken(ctx: ServiceContext, token: string): Promise<ParentRun | null> {
  if (!/^hld_[A-Za-z0-9_-]{32}$/.test(token)) return null;
  const callId = await ctx.messaging.store.peek(tokenKey(token));
  if (!callId) return null;
  const row = await ctx.db('calls').where({ id: callId, status: 'running' }).first();
  if (!row?.sub_mandate_id) return null;
  const agent = ctx.registry.get(String(row.agent_id), String(row.agent_version));
  const sub = await loadMandate(ctx.db, String(row.sub_mandate_id));
  if (!agent || !sub) return null;
  return {
    call: {
      id: callId,
      rootId: String(row.root_id),
      payer: String(row.payer),
      ...(row.max_cost !== null && row.max_cost !== undefined ? { maxCost: BigInt(String(row.max_cost)) } : {}),
    },
    manifest: agent.manifest,
    sub: sub.mandate,
  };
}
