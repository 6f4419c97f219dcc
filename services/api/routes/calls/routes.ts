/**
 * Calls: POST /v0/calls, GET /v0/calls/{id} (with `?wait=<seconds>`: a long-poll, long-poll.ts) and
 * POST /v0/calls/{id}/cancel (gateway.md §5, docs/lifecycle.md). How a submission is answered: answers.ts.
 */
import { Router, type RequestHandler } from 'express';
import { HolonError } from '../../../../shared/core/errors.js';
import { cancelAndWait, cancelState } from '../../../../shared/calls/cancel.js';
import { approvalView, loadApproval } from '../../../../shared/calls/submit/approvals.js';
import { callAnswer, findCall } from './call-view.js';
import { assertPublicUrl } from '../../../../shared/platform/guarded-net.js';
import { answerSubmission, finishedBody, wantsAsync } from './answers.js';
import { EVENT_STREAM_DESCRIPTION } from './events.js';
import { markStreamed, openEventStream, pumpEvents, wantsEventStream, type StreamDeps } from './event-stream.js';
import { callerMandate, noteCall, submitDelegated, submitOnce, type CallBody } from './submission.js';
import { bodyReader, httpUrlOf } from '../../body-reader.js';
import { parseAmount } from '../../../../shared/core/money.js';
import { defineOperations, mount } from '../../openapi/operations.js';
import { CALL_FAILED, CALL_HELD, CALL_QUEUED, CALL_STATE, CALL_SUCCEEDED, CANCEL_ANSWER } from '../../openapi/call-schemas.js';
import { amount, failure, httpUrl, text } from '../../openapi/schemas.js';
import { PAYMENT_REQUIRED_RESPONSE } from '../../openapi/payment-schemas.js';
import { principalOf, requireKind, scopeOf } from '../../principal.js';
import { LongPolls, principalKey, waitParam } from './long-poll.js';
import { paysPerCall, submitPaidHandler } from './paid.js';
import type { PayLimits } from '../../rate-limit.js';

export interface CallRoutesDeps extends StreamDeps {
  /** Hosted: a callback URL must resolve only to public addresses. */
  callbackGuard?: { allowPrivate: boolean };
  /** Keyless paid calls' limits (paid.ts). */
  payLimits?: PayLimits;
}

const CALL_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['input'],
  properties: {
    mandate: text(300, 'The mandate to call under (an agent key: its own, may be left out)'),
    agent: text(300, '`ns/name[@range]`'),
    capability: text(200, 'A capability class: the best agent the mandate allows is picked'),
    input: { description: 'The input, validated against the agent’s interface.input' },
    max_cost: amount('Your ceiling for this call, in the mandate’s currency (gateway.md §2)'),
    callback_url: httpUrl('Called with the outcome when the call ends (signed)'),
    approval: text(100, 'A granted approval’s id'),
  },
  oneOf: [{ required: ['agent'] }, { required: ['capability'] }],
  'x-messages': { oneOf: 'name exactly one of "agent" or "capability"' },
} as const;

const CALL_ID = { id: { description: 'The call id (its receipt id)', example: 'r4' } } as const;
const READ_ERRORS = { 401: failure('No key', 'unauthorized'), 404: failure('No such call of yours', 'not_found') } as const;

export const callOperations = defineOperations({
  submit: {
    id: 'callAgent',
    method: 'post',
    path: '/v0/calls',
    tag: 'calls',
    auth: ['human', 'agent', 'none'],
    summary:
      'Call an agent under a mandate: `{mandate, agent | capability, input, max_cost?}` → `{status, output, receipt}`; without a key or a mandate, pay for the call with x402 (docs/payments.md)',
    description: `With \`Accept: text/event-stream\` an admitted call is answered 200 with its events as they come (\`Location: /v0/calls/{id}\`), as GET /v0/calls/{id}/events serves them; a cut stream not resumed within HOLON_STREAM_RESUME_S ends the call \`disconnected\`. ${EVENT_STREAM_DESCRIPTION}`,
    headers: {
      'PAYMENT-SIGNATURE': { description: 'x402: the payment for a call without a key (base64 JSON), answering the 402’s PAYMENT-REQUIRED' },
      'Idempotency-Key': { description: 'Per API key: a call re-sent with a used key is not run again (`replayed: true`)' },
      Prefer: { description: '`respond-async`: answer 202 at once, then GET /v0/calls/{id}' },
      'X-Holon-Delegation': { description: 'A remote agent calling during its run: the run’s delegation token (the mandate is its sub-mandate)' },
    },
    body: { schema: CALL_BODY, example: { mandate: 'alice/sandbox', agent: 'holon-labs/csv-profile', input: { csv: 'a,b\n1,2\n' } } },
    responses: {
      200: { description: 'The call succeeded', schema: CALL_SUCCEEDED },
      202: { description: 'Pending approval, or on its way (async or past the synchronous wait)', schema: { oneOf: [CALL_HELD, CALL_QUEUED] } },
      400: failure('A bad body, or an agent reference that is not `ns/name[@range]`', 'invalid_request', 'invalid_ref'),
      401: failure('No key', 'unauthorized'),
      402: PAYMENT_REQUIRED_RESPONSE,
      403: failure('Denied by the mandate (with a receipt), or a delegation token that is not live', 'denied', 'invalid_delegation'),
      404: failure(
        'No such mandate, agent, version in range or capability (with a receipt)',
        'unknown_mandate',
        'unknown_agent',
        'no_matching_version',
        'unknown_capability',
        'not_found',
      ),
      409: failure(
        'The approval was used already, the payment was used already, or the Idempotency-Key’s call is still running or was interrupted',
        'approval_used',
        'payment_replayed',
        'idempotency_key_in_use',
        'idempotency_key_interrupted',
      ),
      422: failure(
        'The input does not match the agent’s interface.input, names a file it may not use, or reuses an Idempotency-Key',
        'rejected_input',
        'file_not_found',
        'idempotency_key_reused',
        'payment_unsupported',
      ),
      502: { description: 'The agent failed (never billed unless declared so)', schema: CALL_FAILED },
    },
  },
  read: {
    id: 'readCall',
    method: 'get',
    path: '/v0/calls/{id}',
    tag: 'calls',
    auth: ['human', 'agent'],
    summary: 'A call’s status; once final its receipt, and a success’s output while it is kept (reading takes nothing)',
    params: CALL_ID,
    query: {
      wait: {
        description: 'Long-poll: hold the answer up to this many seconds (0 to 60) until the call is final',
        schema: { type: 'number', minimum: 0, maximum: 60 },
      },
    },
    responses: {
      200: { description: 'The call', schema: CALL_STATE },
      400: failure('A bad wait', 'invalid_request'),
      429: failure('Too many long-polls'),
      ...READ_ERRORS,
    },
  },
  cancel: {
    id: 'cancelCall',
    method: 'post',
    path: '/v0/calls/{id}/cancel',
    tag: 'calls',
    auth: ['human', 'agent'],
    summary: 'Cancel a call: queued → closed at once, running → aborted by its runner, final → unchanged',
    params: CALL_ID,
    responses: {
      200: {
        description: 'The call’s state and `cancel`: cancelled | cancelling | too_late',
        schema: CANCEL_ANSWER,
      },
      400: failure('A delegated call (cancel its top-level call)', 'invalid_request'),
      ...READ_ERRORS,
    },
  },
});

const readCallBody = bodyReader<CallBody>(CALL_BODY);

/** POST /v0/calls: read the body, the delegated or the caller's path, admission (idempotent when keyed), the answer. */
function submitHandler(deps: CallRoutesDeps): RequestHandler {
  return async (req, res) => {
    const r = readCallBody(req.body);
    const token = req.get('x-holon-delegation');
    const paying = token === undefined && paysPerCall(deps, req, r.body);
    // With a delegation token the mandate is implied: the run's sub-mandate. Without a key, a payment may stand for one.
    if (r.body.mandate === undefined && token === undefined && !paying && principalOf(res).kind !== 'agent')
      r.problems.push({ path: '$.mandate', message: 'is required' });
    r.done();
    const body = r.body;
    // Checked for every call, a delegated one too: the amount's and the URL's own words.
    const maxCost = body.max_cost === undefined ? undefined : parseAmount(body.max_cost);
    const callbackUrl = typeof body.callback_url === 'string' ? httpUrlOf(body.callback_url) : undefined;
    if (token !== undefined) return submitDelegated(deps, req, res, { token, body });
    if (paying) {
      if (callbackUrl) throw new HolonError('invalid_request', 'a call paid per request is answered to its request: callback_url needs an account');
      return submitPaidHandler(deps, req, res, {
        ...(body.agent ? { agent: body.agent } : {}),
        ...(body.capability ? { capability: body.capability } : {}),
        input: body.input,
        ...(maxCost !== undefined ? { maxCost } : {}),
      });
    }
    const p = requireKind(res, ['operator', 'human', 'agent'], 'call agents');
    if (callbackUrl && deps.callbackGuard) await assertPublicUrl(callbackUrl, deps.callbackGuard.allowPrivate, { path: '$.callback_url' });
    const mandateId = callerMandate(p, body.mandate);
    const submit = () =>
      deps.engine.submit({
        mandateId,
        ...(body.agent ? { agent: body.agent } : {}),
        ...(body.capability ? { capability: body.capability } : {}),
        input: body.input,
        ...(maxCost !== undefined ? { maxCost } : {}),
        ...(callbackUrl ? { callbackUrl, syncAnswer: !wantsAsync(req) } : {}),
        ...(body.approval ? { approval: { id: body.approval, inScope: scopeOf(p) } } : {}),
        ...(p.kind === 'operator' ? {} : { requester: p.account }),
      });
    const idempotencyKey = req.get('idempotency-key');
    const submitted =
      idempotencyKey === undefined
        ? await submit()
        : await submitOnce(deps.ctx, res, { p, key: idempotencyKey, body: { ...body, mandate: mandateId } }, submit);
    if (!submitted) return;
    noteCall(res, submitted);
    if (submitted.kind === 'queued' && wantsEventStream(req)) {
      // The call's own events, streamed as they come; `completed` hands its output over as a synchronous answer does.
      await markStreamed(deps, submitted.callId, submitted.timeoutMs);
      openEventStream(res, `/v0/calls/${submitted.callId}`);
      await pumpEvents(deps, res, { id: submitted.callId, after: 0, final: (receipt) => finishedBody(deps.ctx, receipt, { handOver: true }) });
      return;
    }
    await answerSubmission(deps, res, submitted, { async: wantsAsync(req) });
  };
}

/** GET /v0/calls/{id}: the call's state; `wait` long-polls until it is final. */
function readHandler(deps: CallRoutesDeps, longPolls: LongPolls): RequestHandler {
  return async (req, res) => {
    const p = requireKind(res, ['operator', 'human', 'agent'], 'read calls');
    const id = String(req.params.id);
    const waitMs = waitParam(req.query.wait);
    let found = await findCall(deps, p, id);
    noteCall(res, id);
    if (!found.receipt && waitMs > 0) {
      // Long-poll: held until the call's receipt exists or the wait ends; the database says which, read again after.
      await longPolls.hold(res, principalKey(p), (signal) => deps.waiter.wait(id, waitMs, { signal }));
      if (res.writableEnded || res.destroyed) return;
      found = await findCall(deps, p, id);
    }
    res.json(await callAnswer(deps, id, found, { withOutput: true }));
  };
}

/**
 * POST /v0/calls/{id}/cancel, by the caller: queued → closed at once; running → aborted by its runner; final →
 * unchanged. Always 200 with the call's state (and `cancel`: cancelled | cancelling | too_late); 404 for anyone
 * else's call.
 */
function cancelHandler(deps: CallRoutesDeps): RequestHandler {
  return async (req, res) => {
    const p = requireKind(res, ['operator', 'human', 'agent'], 'cancel calls');
    const id = String(req.params.id);
    const before = await findCall(deps, p, id);
    noteCall(res, id);
    const mandateId = before.receipt ? before.receipt.mandate : before.call!.mandateId;
    if (mandateId?.includes('.')) {
      throw new HolonError('invalid_request', `${id.slice(0, 100)} is a delegated call: it ends with its parent; cancel the top-level call`);
    }
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    await cancelAndWait(deps.engine, deps.waiter, id, { signal: gone.signal });
    if (res.destroyed) return;
    const after = await findCall(deps, p, id);
    const approval =
      after.receipt?.status === 'pending_approval' && after.receipt.approval ? await loadApproval(deps.ctx.db, after.receipt.approval, deps.ctx.now()) : null;
    // The answer to a cancel never carries the output of a call that finished first: GET /v0/calls/{id} reads it.
    res.json({
      ...(await callAnswer(deps, id, after, { withOutput: false })),
      ...(approval ? { approval: approvalView(approval.approval) } : {}),
      cancel: cancelState(after.receipt, approval?.approval.status),
    });
  };
}

export function callRoutes(deps: CallRoutesDeps): Router {
  const router = Router();
  mount(router, callOperations.submit, submitHandler(deps));
  mount(router, callOperations.read, readHandler(deps, new LongPolls()));
  mount(router, callOperations.cancel, cancelHandler(deps));
  return router;
}
