/**
 * The steps of POST /v0/calls that are not admission itself (routes/calls.ts calls them in order): a remote agent's
 * delegated call, the mandate a caller may call under, and the Idempotency-Key (claimed before anything runs,
 * replayed, released on failure, recorded with the outcome).
 */
import type { Request, Response } from 'express';
import { parentOfToken } from '../../../../shared/calls/delegation-tokens.js';
import type { Submitted } from '../../../../shared/calls/submit/submit.js';
import type { ServiceContext } from '../../../../shared/context.js';
import { HolonError } from '../../../../shared/core/errors.js';
import {
  claimIdempotencyKey,
  isIdempotencyKey,
  recordIdempotentCall,
  releaseIdempotencyKey,
  requestHash,
} from '../../../../shared/calls/submit/idempotency.js';
import { answerReplay, answerSubmission, wantsAsync, type AnswerDeps } from './answers.js';
import { httpStatusOf } from '../../http-status.js';
import { assertSeesMandate, type Principal } from '../../principal.js';
import type { Body } from '../../body-reader.js';

/** A POST /v0/calls body, once its schema has been checked (routes/calls.ts `CALL_BODY`). */
export type CallBody = Body & {
  mandate?: string;
  agent?: string;
  capability?: string;
  input?: unknown;
  max_cost?: string;
  callback_url?: string;
  approval?: string;
};

type Caller = Extract<Principal, { kind: 'operator' | 'human' | 'agent' }>;

/** The call a request created or read, for its access log line (services/api/access-log.ts). */
export function noteCall(res: Response, s: Submitted | string): void {
  res.locals.callId = typeof s === 'string' ? s : s.kind === 'queued' ? s.callId : s.receipt.id;
}

/** A remote agent calling during its run (X-Holon-Delegation): the call is the run's child, under its sub-mandate. */
export async function submitDelegated(deps: AnswerDeps, req: Request, res: Response, { token, body }: { token: string; body: CallBody }): Promise<void> {
  const parent = await parentOfToken(deps.ctx, token);
  if (!parent) throw new HolonError('invalid_delegation', 'the delegation token is unknown, expired, or its run has ended');
  if (body.mandate !== undefined && body.mandate !== parent.sub.id)
    throw new HolonError('invalid_request', `a delegated call runs under its sub-mandate ${parent.sub.id}`);
  if (body.approval) throw new HolonError('invalid_request', 'nobody can approve inside a delegated run');
  const target = body.capability ? { capability: body.capability } : { agent: body.agent! };
  const child = await deps.engine.submitChild(parent, {
    target,
    input: body.input,
    options: typeof body.max_cost === 'string' ? { max_cost: body.max_cost } : {},
  });
  noteCall(res, child);
  await answerSubmission(deps, res, child, { async: wantsAsync(req) });
}

/** The mandate a caller calls under: an agent key's own; a human's root mandate they issued (never a sub-mandate). */
export function callerMandate(p: Caller, mandate: string | undefined): string {
  const mandateId = p.kind === 'agent' ? p.mandateId : mandate!;
  if (p.kind === 'operator') return mandateId;
  if (mandate !== undefined && p.kind === 'agent' && mandate !== p.mandateId) throw new HolonError('not_found', `there is no mandate ${mandate}`);
  assertSeesMandate(p, mandateId, `there is no mandate ${mandateId}`);
  if (mandateId.includes('.')) throw new HolonError('invalid_request', 'a sub-mandate is used only by the delegated run it was derived for');
  return mandateId;
}

/**
 * Submit under an Idempotency-Key, per API key (dev mode: the operator's one scope): claimed in Postgres before
 * anything runs; a key seen before is answered from its first request (`answerReplay`; then null: answered); a
 * submission that throws releases the key; the outcome is recorded with it.
 */
export async function submitOnce(
  ctx: ServiceContext,
  res: Response,
  request: { p: Caller; key: string; body: CallBody },
  submit: () => Promise<Submitted>,
): Promise<Submitted | null> {
  const { p, key, body } = request;
  if (!isIdempotencyKey(key)) throw new HolonError('invalid_request', 'the Idempotency-Key must be 1 to 255 printable ASCII characters');
  const scope = p.kind === 'operator' ? 'operator' : p.keyPrefix;
  const hash = requestHash(body);
  const claim = await claimIdempotencyKey(ctx.db, scope, key, hash);
  if (claim.kind === 'existing') {
    await answerReplay(ctx, res, claim.row, hash);
    return null;
  }
  let submitted: Submitted;
  try {
    submitted = await submit();
  } catch (e) {
    await releaseIdempotencyKey(ctx.db, scope, key);
    throw e;
  }
  if (submitted.kind === 'queued') await recordIdempotentCall(ctx.db, scope, key, { callId: submitted.callId });
  else {
    const refused = submitted.kind === 'held' ? { status: 202, code: 'pending_approval' } : { status: httpStatusOf(submitted.code), code: submitted.code };
    await recordIdempotentCall(ctx.db, scope, key, { callId: submitted.receipt.id, refused });
  }
  return submitted;
}
