/**
 * The demo (gateway.md §7; docs/demo.md): `POST /v0/demo/{ns}/{name}` `{input}` runs one of our own cheap shipped
 * agents for the public site, without a key. It is NOT a call: no mandate, no hold, no journal entry, no receipt, no
 * call row and no call_events entry (not billed, not measured). The agent runs through the same runtimes as a call,
 * under its hard timeout; its input and output are checked against its interface like a call's.
 *
 * Limits: DEMO_PER_VISITOR per visitor (the address client-address.ts computes: the trusted proxy's) and DEMO_TOTAL in
 * all per hour, in the shared rate limiter (Redis across API processes; in memory without Redis). Unlike the other
 * limits it FAILS CLOSED: a limiter outage makes the demo answer 503, since nothing paid depends on it.
 * Browsers: only HOLON_SITE_URL's origin, with CORS (origins.ts). Anything else under /v0/demo is the ordinary 404.
 */
import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import type { ServiceContext } from '../../../shared/context.js';
import { HolonError } from '../../../shared/core/errors.js';
import { compileInterface } from '../../../shared/core/manifest/interface-validator.js';
import {
  DEMO_MAX_BODY_BYTES,
  DEMO_MAX_OUTPUT_BYTES,
  DEMO_MAX_STRING,
  DEMO_PER_VISITOR,
  DEMO_TOTAL,
  demoInputProblems,
  demoRefusal,
} from '../../../shared/demo/rules.js';
import type { RateLimiter, RateRule } from '../../../shared/platform/rate-limit.js';
import { cancelReason, runDeadline } from '../../../shared/runtimes/abort.js';
import type { AgentVersion, RunResult, Runtime } from '../../../shared/runtimes/types.js';
import { clientAddress } from '../client-address.js';
import { defineOperations, mount } from '../openapi/operations.js';
import { failure } from '../openapi/schemas.js';
import { bodyReader } from '../body-reader.js';

export interface DemoDeps {
  ctx: ServiceContext;
  /** The runtimes the runner uses (shared/runtimes): the demo runs the agent the same way, unbilled. */
  runtimes: Runtime;
  limiter: RateLimiter;
  /** HOLON_TRUST_PROXY: who a visitor is (client-address.ts). */
  trustProxy: boolean;
  /** Default DEMO_PER_VISITOR and DEMO_TOTAL. */
  perVisitor?: RateRule;
  total?: RateRule;
}

const NOTE = 'This was a free demo run: not billed, not measured, and no receipt was written. Real calls need a key and a mandate (POST /v0/calls).';

const DEMO_BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['input'],
  properties: {
    input: {
      type: 'object',
      description: `The agent's input (its interface.input), narrowed: strings at most ${DEMO_MAX_STRING} characters, no file handle, the whole body at most ${DEMO_MAX_BODY_BYTES} bytes`,
      'x-messages': { type: 'must be a JSON object: the agent’s input' },
    },
  },
} as const;

const DEMO_ANSWER = {
  type: 'object',
  required: ['demo', 'agent', 'status', 'billed', 'note'],
  properties: {
    demo: { const: true },
    agent: { type: 'string', examples: ['holon-labs/csv-profile@1.0.0'] },
    status: { enum: ['succeeded', 'failed'] },
    output: { description: 'The agent’s output, valid against its interface.output (on success)' },
    error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
    billed: { const: false },
    measured: { const: false },
    duration_ms: { type: 'integer' },
    note: { type: 'string' },
  },
  not: { required: ['receipt'] },
} as const;

export const demoOperations = defineOperations({
  run: {
    id: 'runDemo',
    method: 'post',
    path: '/v0/demo/{ns}/{name}',
    tag: 'demo',
    auth: ['none'],
    summary: 'A free try of one of our own cheap agents, for the public site: not billed, not measured, no receipt',
    description: `${DEMO_PER_VISITOR.limit} runs per visitor and ${DEMO_TOTAL.limit} in all per hour. From a browser, only the site (HOLON_SITE_URL) may call it (CORS; the preflight is answered); other origins get 403.`,
    params: {
      ns: { description: 'The platform’s namespace', example: 'holon-labs' },
      name: { description: 'A shipped agent', example: 'csv-profile' },
    },
    body: { schema: DEMO_BODY, example: { input: { csv: 'name,age\nada,36\nlin,41\n' } } },
    responses: {
      200: {
        description: 'The agent answered',
        schema: DEMO_ANSWER,
        example: {
          demo: true,
          agent: 'holon-labs/csv-profile@1.0.0',
          status: 'succeeded',
          output: { rows: 2, columns: [] },
          billed: false,
          measured: false,
          note: NOTE,
        },
      },
      400: failure('A bad body, or an input the demo narrows (long strings, files)', 'invalid_request'),
      403: failure('A web page other than the site', 'origin_not_allowed'),
      404: failure('Not one of our demo agents', 'demo_not_available'),
      413: failure(`A body larger than ${DEMO_MAX_BODY_BYTES} bytes`, 'body_too_large'),
      422: failure('The input does not match the agent’s interface.input', 'rejected_input'),
      429: failure('The visitor’s or everyone’s hourly demo runs are used up', 'rate_limited'),
      502: { description: 'The agent failed (a declared error, a timeout, an invalid output)', schema: DEMO_ANSWER },
      503: failure('The demo’s limiter is unavailable', 'demo_unavailable'),
    },
  },
});

const readDemo = bodyReader(DEMO_BODY);

/** The answer for a run that did not produce a valid output. */
function failed(code: string, message: string) {
  return { status: 'failed' as const, error: { code, message: message.slice(0, 500) } };
}

function outcome(agent: AgentVersion, result: RunResult): { status: 'succeeded'; output: unknown } | ReturnType<typeof failed> {
  if (result.kind !== 'output') return failed(result.code, result.message ?? result.code);
  const problems = compileInterface(agent.manifest).output(result.output);
  if (problems.length) return failed('invalid_output', "the agent's output does not match its interface.output");
  if (Buffer.byteLength(JSON.stringify(result.output ?? null)) > DEMO_MAX_OUTPUT_BYTES) {
    return failed('demo_output_too_large', `the output is larger than the demo shows (${DEMO_MAX_OUTPUT_BYTES} bytes): try a shorter input`);
  }
  return { status: 'succeeded', output: result.output };
}

export function demoRoutes(deps: DemoDeps): Router {
  const router = Router();
  const { ctx, runtimes, limiter } = deps;
  const perVisitor = deps.perVisitor ?? DEMO_PER_VISITOR;
  const total = deps.total ?? DEMO_TOTAL;

  /** The visitor's slot, then everyone's (a refused visitor does not use up the shared hour); a refusal in words. */
  const admit = async (visitor: string): Promise<{ message: string; retryAfterS: number } | undefined> => {
    try {
      const mine = await limiter.hit(`demo:addr:${visitor}`, perVisitor);
      if (!mine.ok) return { message: `the demo allows ${perVisitor.limit} runs per visitor per hour`, retryAfterS: mine.retryAfterS };
      const all = await limiter.hit('demo:all', total);
      if (!all.ok) return { message: `the demo's ${total.limit} runs of this hour are used up`, retryAfterS: all.retryAfterS };
      return undefined;
    } catch {
      throw new HolonError('demo_unavailable', 'the demo is unavailable for a moment; try again later');
    }
  };

  mount(router, demoOperations.run, async (req, res) => {
    res.set('Cache-Control', 'no-store');
    if (Buffer.byteLength(JSON.stringify(req.body ?? null)) > DEMO_MAX_BODY_BYTES) {
      throw new HolonError('body_too_large', `a demo request is at most ${DEMO_MAX_BODY_BYTES} bytes`);
    }
    const r = readDemo(req.body);
    r.done();
    const id = `${String(req.params.ns)}/${String(req.params.name)}`.slice(0, 200);
    const resolved = ctx.registry.resolve(id);
    const refusal = resolved.ok ? demoRefusal(resolved.agent) : 'no such agent is listed';
    if (!resolved.ok || refusal) throw new HolonError('demo_not_available', `there is no demo of ${id}: ${refusal}`);
    const agent = resolved.agent;
    const narrowed = demoInputProblems(r.body.input);
    if (narrowed.length) throw new HolonError('invalid_request', 'the demo takes short text only', narrowed);
    const problems = compileInterface(agent.manifest)
      .input(r.body.input)
      .map((p) => ({ ...p, path: `$.input${p.path.slice(1)}` }));
    if (problems.length) throw new HolonError('rejected_input', `the input does not match ${agent.manifest.id}'s interface.input`, problems);
    const refused = await admit(clientAddress(req, deps.trustProxy));
    if (refused) {
      const seconds = Math.max(1, refused.retryAfterS);
      res.set('Retry-After', String(seconds));
      throw new HolonError('rate_limited', `${refused.message}; retry in ${seconds} s`);
    }

    // The hard timeout of the agent's manifest; a visitor who leaves cancels the run.
    const timeoutMs = agent.manifest.runtime.timeoutS * 1000;
    const left = new AbortController();
    res.once('close', () => left.abort(cancelReason('the visitor left')));
    const deadline = runDeadline(timeoutMs, left.signal);
    const started = Date.now();
    let result: RunResult;
    try {
      result = await runtimes.run(agent, r.body.input, { callId: `demo_${randomUUID()}`, signal: deadline.signal, timeoutMs });
    } finally {
      deadline.dispose();
    }
    const answer = outcome(agent, result);
    const durationMs = Date.now() - started;
    // What happened, never the input, the output or who asked.
    ctx.log.info(
      { agent: `${agent.manifest.id}@${agent.manifest.version}`, outcome: answer.status === 'succeeded' ? 'succeeded' : answer.error.code, ms: durationMs },
      'demo run',
    );
    res.status(answer.status === 'succeeded' ? 200 : 502).json({
      demo: true,
      agent: `${agent.manifest.id}@${agent.manifest.version}`,
      ...answer,
      billed: false,
      measured: false,
      duration_ms: durationMs,
      note: NOTE,
    });
  });

  return router;
}
