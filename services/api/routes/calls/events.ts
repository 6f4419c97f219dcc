/**
 * A call's events and its questions (docs/lifecycle.md, "A call's events", "Agents that ask"):
 * GET /v0/calls/{id}/events (Server-Sent Events, resumable with Last-Event-ID) and POST /v0/calls/{id}/input (the
 * answer to the question the call waits on). The same principal rules as GET /v0/calls/{id}: another's call is 404.
 */
import { Router, type RequestHandler } from 'express';
import { answerQuestion } from '../../../../shared/calls/events/answer.js';
import { lastEventId } from '../../../../shared/calls/events/types.js';
import { bodyReader } from '../../body-reader.js';
import { defineOperations, mount } from '../../openapi/operations.js';
import { CALL_REF, QUESTION_ID } from '../../openapi/call-schemas.js';
import { failure } from '../../openapi/schemas.js';
import { requireKind } from '../../principal.js';
import { finishedBody } from './answers.js';
import { callAnswer, findCall } from './call-view.js';
import { openEventStream, pumpEvents, type StreamDeps } from './event-stream.js';
import { noteCall } from './submission.js';

const CALL_ID = { id: { description: 'The call id (its receipt id)', example: 'r4' } } as const;
const READ_ERRORS = { 401: failure('No key', 'unauthorized'), 404: failure('No such call of yours', 'not_found') } as const;

export const EVENT_STREAM_DESCRIPTION =
  'Server-Sent Events, one per event of the call, in order, each with its `id:` and its name as `event:` — `queued` {call}, `running` {call}, `progress` {message?, fraction?}, `output.chunk` {seq, data, units_so_far?}, `input_required` {question, request, answered}, `input_provided` {question}, then `completed`: the final answer ({status, output | error, receipt}), after which the stream ends. Reconnect with `Last-Event-ID` to get what followed that event, each once.';

const INPUT_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['input'],
  properties: {
    input: { description: 'The answer, checked against the question’s schema' },
    question: { type: 'integer', minimum: 3, description: 'The question answered (its event id): refused if the call waits on another' },
  },
} as const;

export const eventOperations = defineOperations({
  events: {
    id: 'callEvents',
    method: 'get',
    path: '/v0/calls/{id}/events',
    tag: 'calls',
    auth: ['human', 'agent'],
    summary: 'A call’s events as Server-Sent Events: progress, streamed chunks, questions, and the final answer',
    params: CALL_ID,
    headers: { 'Last-Event-ID': { description: 'Resume after this event id (the events after it are sent, each once)' } },
    responses: {
      200: { description: EVENT_STREAM_DESCRIPTION, contentType: 'text/event-stream' },
      ...READ_ERRORS,
    },
  },
  input: {
    id: 'answerCall',
    method: 'post',
    path: '/v0/calls/{id}/input',
    tag: 'calls',
    auth: ['human', 'agent'],
    summary: 'Answer the question a running call’s agent asked (its `input_required`)',
    params: CALL_ID,
    body: { schema: INPUT_BODY, example: { input: { confirm: true } } },
    responses: {
      202: {
        description: 'The answer is the question’s: the agent goes on',
        schema: {
          type: 'object',
          additionalProperties: false,
          required: ['question', 'call'],
          properties: { question: QUESTION_ID, call: CALL_REF },
        },
      },
      400: failure('A malformed body', 'invalid_request'),
      409: failure('The call waits on no question, or on another', 'no_question', 'question_mismatch'),
      422: failure('The answer does not meet the question’s schema', 'rejected_input'),
      ...READ_ERRORS,
    },
  },
});

const readInputBody = bodyReader<{ input: unknown; question?: number }>(INPUT_BODY);

/** GET /v0/calls/{id}/events: the call's events after Last-Event-ID, until `completed`. */
function eventsHandler(deps: StreamDeps): RequestHandler {
  return async (req, res) => {
    const p = requireKind(res, ['operator', 'human', 'agent'], 'read calls');
    const id = String(req.params.id);
    await findCall(deps, p, id);
    noteCall(res, id);
    openEventStream(res);
    await pumpEvents(deps, res, {
      id,
      after: lastEventId(req.get('last-event-id')),
      final: (receipt) => finishedBody(deps.ctx, receipt, { handOver: false }),
    });
  };
}

/** POST /v0/calls/{id}/input: the answer to the call's open question. */
function inputHandler(deps: StreamDeps): RequestHandler {
  return async (req, res) => {
    const p = requireKind(res, ['operator', 'human', 'agent'], 'answer calls');
    const id = String(req.params.id);
    const r = readInputBody(req.body);
    r.done();
    const found = await findCall(deps, p, id);
    noteCall(res, id);
    const answered = await answerQuestion(deps.ctx, id, r.body.input, r.body.question);
    const state = await callAnswer(deps, id, found, { withOutput: false });
    res.status(202).json({ question: answered.question, call: state.call });
  };
}

export function eventRoutes(deps: StreamDeps): Router {
  const router = Router();
  mount(router, eventOperations.events, eventsHandler(deps));
  mount(router, eventOperations.input, inputHandler(deps));
  return router;
}
