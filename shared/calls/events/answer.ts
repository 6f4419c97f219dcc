/**
 * Answering a running call's question (`POST /v0/calls/{id}/input`, an MCP elicitation's result, the console), in any
 * API process: the answer is checked against the question's schema, kept in the ephemeral store under a fresh
 * reference, and the question's row takes that reference in one conditional UPDATE — so a question takes one answer,
 * once, and an answer meant for an earlier question never reaches a later one. The run that asked hears it on
 * `calls-input` (or finds it on its next look at the row).
 */
import { randomBytes } from 'node:crypto';
import type { ServiceContext } from '../../context.js';
import { HolonError, type Problem } from '../../core/errors.js';
import { compileAuthorSchema } from '../../core/manifest/rules/author-schema.js';
import { ajvProblems } from '../../core/schema/ajv.js';
import { answerKey, CALLS_INPUT_CHANNEL, eventKey } from '../wire.js';
import { openQuestion, takeQuestion } from './rows.js';
import type { InputRequest } from './types.js';

/** The question a call waits on, with its words and schema (null once its content is past its time in the store). */
export interface OpenQuestion {
  question: number;
  request: InputRequest | null;
}

export async function questionOf(ctx: ServiceContext, callId: string): Promise<OpenQuestion | undefined> {
  const row = await openQuestion(ctx.db, callId);
  if (!row || row.answerRef !== null) return undefined;
  const text = await ctx.messaging.store.peek(eventKey(callId, row.seq));
  return { question: row.seq, request: text === undefined ? null : (JSON.parse(text) as InputRequest) };
}

/**
 * Give the call's open question its answer. Refused: no open question (`no_question`, 409), an answer meant for
 * another question (`question_mismatch`, 409), an answer its schema does not accept (`rejected_input`, 422).
 */
export async function answerQuestion(ctx: ServiceContext, callId: string, answer: unknown, meant?: number): Promise<{ question: number }> {
  const open = await questionOf(ctx, callId);
  if (!open) throw new HolonError('no_question', `call ${callId.slice(0, 100)} is not waiting for an answer`);
  if (meant !== undefined && meant !== open.question) {
    throw new HolonError('question_mismatch', `question ${meant} is not the one the call waits on (${open.question}): it was answered, or never asked`);
  }
  const problems = answerProblems(open.request, answer);
  if (problems.length) throw new HolonError('rejected_input', 'the answer does not match the question’s schema', problems);
  const ref = randomBytes(12).toString('hex');
  const key = answerKey(callId, ref);
  await ctx.messaging.store.put(key, JSON.stringify(answer), ctx.settings.inputTtlS);
  if (!(await takeQuestion(ctx.db, callId, open.question, ref))) {
    await ctx.messaging.store.delete(key);
    throw new HolonError('question_mismatch', `question ${open.question} was answered already`);
  }
  await ctx.messaging.notifier.publish(CALLS_INPUT_CHANNEL, callId).catch(() => undefined);
  return { question: open.question };
}

function answerProblems(request: InputRequest | null, answer: unknown): Problem[] {
  if (answer === undefined) return [{ path: '$.input', message: 'is required' }];
  if (!request?.schema) return [];
  const validate = compileAuthorSchema(request.schema);
  return validate(answer) ? [] : ajvProblems(validate.errors, '$.input');
}
