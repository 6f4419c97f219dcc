/** How much each role takes on at once, how long a result waits, how long a stopping process lets work finish. */
import { inSection, ROLES, setting } from './declare.js';

export const WORKERS = inSection('gateway', {
  resultTtlS: setting.int({
    env: 'HOLON_RESULT_TTL_S',
    default: 600,
    min: 1,
    max: 86_400,
    doc: "how long a finished call's output waits for pickup, seconds",
    roles: ['api', 'runner'],
  }),
  /** shared/calls/events/: a streamed call whose caller went away and did not come back within it ends `disconnected`. */
  streamResumeS: setting.int({
    env: 'HOLON_STREAM_RESUME_S',
    default: 30,
    min: 1,
    max: 3600,
    doc: 'how long a call streamed to its caller (`Accept: text/event-stream`) waits for the caller to reconnect (`Last-Event-ID`) after the stream was cut, seconds; then it ends `disconnected` (per_unit bills the units delivered, other models nothing)',
    roles: ['api'],
  }),
  /** shared/calls/run/run-stream.ts: a question's wait; the run's own deadline stops meanwhile. */
  inputTtlS: setting.int({
    env: 'HOLON_INPUT_TTL_S',
    default: 600,
    min: 1,
    max: 86_400,
    doc: "how long an agent that asked its caller a question (`input_required`) waits for the answer, seconds; then the call ends `no_answer`, unbilled. The run's hard timeout does not run meanwhile",
    roles: ['api', 'runner'],
  }),
  /** services/compose.ts: runs, evaluations and synchronous answers finish, then are handed back. */
  stopGraceS: setting.int({
    env: 'HOLON_STOP_GRACE_S',
    default: 300,
    min: 0,
    max: 3600,
    doc: "how long a stopping process (SIGTERM) lets what it holds finish: runs, evaluations, synchronous answers. Then runners end what still runs `failed / gateway_restarted` (unbilled), evaluators hand their evaluations to another, the API answers 202. Keep the orchestrator's grace above it (`docs/operating.md`)",
    roles: ROLES,
  }),
  runnerConcurrency: setting.int({
    env: 'HOLON_RUNNER_CONCURRENCY',
    default: 32,
    min: 1,
    max: 1000,
    doc: 'calls one runner runs at once',
    roles: ['runner'],
  }),
  settlerConcurrency: setting.int({
    env: 'HOLON_SETTLER_CONCURRENCY',
    default: 32,
    min: 1,
    max: 200,
    doc: 'settle jobs one settler takes at once (it commits them in batches)',
    roles: ['settler'],
  }),
  evaluatorConcurrency: setting.int({
    env: 'HOLON_EVALUATOR_CONCURRENCY',
    default: 2,
    min: 1,
    max: 100,
    doc: 'evaluations one evaluator runs at once',
    roles: ['evaluator'],
  }),
  allowPrivateEndpoints: setting.flag({
    env: 'HOLON_ALLOW_PRIVATE_ENDPOINTS',
    meaning: 'allow agents on private addresses',
    doc: '`1`: published agents, hosted callbacks and MCP clients’ metadata documents may reach private addresses (refused in production)',
    roles: ROLES,
    production: {
      refuses: 'with `HOLON_ALLOW_PRIVATE_ENDPOINTS=1`',
      check: (allowed) =>
        allowed ? 'HOLON_ALLOW_PRIVATE_ENDPOINTS=1 is refused in production (published agents must not reach private addresses)' : undefined,
    },
  }),
});
