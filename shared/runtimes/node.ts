/**
 * The dev runtime (gateway.md §6 "Dev runtime"): runs `export default async function run(input, ctx)`
 * from `agent.mjs` beside an agent's holon.yaml, in this process.
 *
 * Every outcome is a RunResult; nothing the agent does makes `run` throw or hang past the signal:
 *   - the return value is the output (`undefined` is an agent_error: "returned nothing");
 *   - `throw ctx.error(code, message?)` is a declared (or undeclared) error code: billing decides;
 *   - anything else thrown, an invalid `ctx.units` / `ctx.quote`, or a value that is not JSON is agent_error;
 *   - the signal (hard timeout or cancellation) decides the call at once, even if the handler never returns.
 *
 * The same `loadHandler` option is where `container` and `a2a` runtimes will plug in.
 */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { tryParseAmount, type Micros } from '../core/money.js';
import { abortedResult, raceSignal } from './abort.js';
import { describeError, failure, MAX_DECLARED_MESSAGE, MAX_FAILURE_MESSAGE, truncate } from './messages.js';
import type { AgentVersion, RunContext, RunResult, Runtime } from './types.js';

// ---------------------------------------------------------------------------------------------
// What the agent sees.
// ---------------------------------------------------------------------------------------------

/** Delegation (gateway.md §3), added by the gateway through an extension: `ctx.call(target, input)`. */
type AgentCall = (target: string | { capability: string } | { agent: string }, input: unknown) => Promise<unknown>;

/** The `ctx` an agent's handler receives. Extensions may add members (`call`); augment this interface for more. */
export interface AgentContext {
  /** Stable call id (the receipt id): agents may deduplicate on it. */
  readonly callId: string;
  /** The caller's cap in the agent's currency, when the caller set one. */
  readonly maxCost: { readonly amount: string; readonly currency: string } | undefined;
  /** Fires at the hard timeout or on cancellation. */
  readonly signal: AbortSignal;
  /** The hard timeout, in milliseconds (for information). */
  readonly timeoutMs: number;
  /** Report the units consumed (per_unit pricing): a non-negative safe integer. The last report counts. */
  units(n: number): void;
  /** Report the price (quote pricing): a decimal string with at most 6 decimals, e.g. "0.35". The last report counts. */
  quote(x: string): void;
  /** An error to throw for an error code: `throw ctx.error('no_table_found', 'no table on page 1')`. */
  error(code: string, message?: string): Error;
  /** Delegation, when the gateway installed it (agents that declare `calls`). */
  call?: AgentCall;
  /**
   * One chunk of a streamed output (`interface.stream.chunk`), with the units delivered so far (cumulative, per_unit).
   * Await it: it rejects when the run is over (the chunk would pass the budget, or is invalid) — and the signal fires.
   */
  emit(chunk: unknown, options?: { units?: number }): Promise<void>;
  /** Tell the caller how far along the run is. */
  progress(p: { message?: string; fraction?: number }): Promise<void>;
  /** Ask the caller a question; resolves with the answer, checked against `schema`. The hard timeout stops meanwhile. */
  ask(request: { message: string; schema?: Record<string, unknown> }): Promise<unknown>;
}

export type Handler = (input: unknown, ctx: AgentContext) => unknown;

interface AgentContextExtensionInfo {
  agent: AgentVersion;
  run: RunContext;
}

/** Adds members to an agent's ctx before the handler runs (the gateway adds `ctx.call` this way). */
export type AgentContextExtension = (ctx: AgentContext, info: AgentContextExtensionInfo) => void;

/** Identity helper that types an extension: `createNodeRuntime({ extendContext: defineAgentContextExtension((ctx, {run}) => { ctx.call = … }) })`. */
export function defineAgentContextExtension(extension: AgentContextExtension): AgentContextExtension {
  return extension;
}

/** A RunContext that may carry a per-run extension (applied after the factory's own). */
export interface NodeRunContext extends RunContext {
  extendContext?: AgentContextExtension;
}

/** Throw this from a `loadHandler` when the agent cannot be run at all: the run ends `runtime_unavailable`. Any other loader error is agent_error. */
class RuntimeUnavailableError extends Error {
  override readonly name = 'RuntimeUnavailableError';
}

export interface NodeRuntimeOptions {
  /** How to get an agent's handler. Default: import `agent.mjs` from `agent.dir` (cached per path). */
  loadHandler?: (agent: AgentVersion) => Promise<Handler>;
  /** Runs for every call before the handler, e.g. to install `ctx.call`. */
  extendContext?: AgentContextExtension;
}

// ---------------------------------------------------------------------------------------------
// Loading agent.mjs
// ---------------------------------------------------------------------------------------------

const moduleCache = new Map<string, Promise<Handler>>();

async function importHandler(file: string): Promise<Handler> {
  try {
    await access(file);
  } catch {
    throw new RuntimeUnavailableError(`no agent.mjs in the agent's directory (${file})`);
  }
  const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  if (typeof mod.default !== 'function') {
    throw new TypeError('agent.mjs must `export default async function run(input, ctx)`');
  }
  return mod.default as Handler;
}

/** The default loader: `agent.mjs` in `agent.dir`, imported once per path. A failed import is retried next time. */
function loadAgentModule(agent: AgentVersion): Promise<Handler> {
  if (!agent.dir) {
    return Promise.reject(new RuntimeUnavailableError(`${agent.manifest.id}@${agent.manifest.version} has no directory to load agent.mjs from`));
  }
  const file = path.resolve(agent.dir, 'agent.mjs');
  let cached = moduleCache.get(file);
  if (!cached) {
    cached = importHandler(file);
    moduleCache.set(file, cached);
    cached.catch(() => {
      if (moduleCache.get(file) === cached) moduleCache.delete(file);
    });
  }
  return cached;
}

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

/** Errors made by ctx.error: only these become `{kind: 'error'}` (a stray `err.code` never does). */
const codeErrors = new WeakMap<Error, { code: unknown; message: string | undefined }>();

class AgentCodeError extends Error {
  override readonly name = 'AgentCodeError';
}

/** Keep the output exactly as it would travel as JSON; undefined when it cannot (bigint, cycles, a function). */
function asJson(value: unknown): { ok: true; value: unknown } | { ok: false; message: string } {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    return { ok: false, message: `the agent returned a value that cannot be sent as JSON (${describeError(err)})` };
  }
  if (text === undefined) return { ok: false, message: `the agent returned a ${typeof value}, which is not JSON` };
  return { ok: true, value: JSON.parse(text) as unknown };
}

function cloneInput(input: unknown): unknown {
  try {
    return structuredClone(input);
  } catch {
    return input;
  }
}

// ---------------------------------------------------------------------------------------------
// The runtime
// ---------------------------------------------------------------------------------------------

interface RunState {
  decided: boolean;
  units?: Micros;
  quote?: Micros;
  /** The first invalid report: the call fails with it whatever the agent does next. */
  problem?: string;
}

function billing(state: RunState): { units?: bigint; quote?: bigint } {
  return {
    ...(state.units !== undefined ? { units: state.units } : {}),
    ...(state.quote !== undefined ? { quote: state.quote } : {}),
  };
}

function buildContext(state: RunState, run: RunContext): AgentContext {
  const maxCost = run.maxCost ? Object.freeze({ amount: run.maxCost.amount, currency: run.maxCost.currency }) : undefined;
  const report = (message: string): never => {
    if (!state.decided && state.problem === undefined) state.problem = message;
    throw new TypeError(message);
  };
  return {
    callId: run.callId,
    maxCost,
    signal: run.signal,
    timeoutMs: run.timeoutMs,
    units(n: number): void {
      if (state.decided) return;
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
        report(`ctx.units(n) needs a non-negative whole number, got ${describeValue(n)}`);
      }
      state.units = BigInt(n);
    },
    quote(x: string): void {
      if (state.decided) return;
      const parsed = tryParseAmount(x);
      if (!parsed.ok) report(`ctx.quote(x) needs a decimal string such as "0.35": ${parsed.message}`);
      else state.quote = parsed.value;
    },
    error(code: string, message?: string): Error {
      const err = new AgentCodeError(typeof code === 'string' ? code : 'invalid error code');
      codeErrors.set(err, { code, message: typeof message === 'string' ? message : undefined });
      return err;
    },
    // Without a stream (an evaluation's case) chunks and progress go nowhere; a question has nobody to answer it.
    emit: (chunk, options) => run.stream?.emit(chunk, options?.units) ?? Promise.resolve(),
    progress: (p) => run.stream?.progress(p) ?? Promise.resolve(),
    ask: (request) => run.stream?.ask(request) ?? Promise.reject(new Error('nobody can answer a question here (no caller is attached)')),
  };
}

function describeValue(v: unknown): string {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return `the string ${JSON.stringify(truncate(v, 40))}`;
  if (v === null) return 'null';
  return `a ${typeof v}`;
}

/** Turn what the handler did into a RunResult. Called synchronously when the handler settles. */
function decide(state: RunState, outcome: { returned: unknown } | { threw: unknown }): RunResult {
  state.decided = true;
  if (state.problem !== undefined) return failure('agent_error', state.problem);
  const extra = billing(state);
  if ('threw' in outcome) {
    const err = outcome.threw;
    const declared = err instanceof Error ? codeErrors.get(err) : undefined;
    if (declared) return declaredError(declared, extra);
    return failure('agent_error', `the agent threw: ${describeError(err)}`);
  }
  const value = outcome.returned;
  // Returning ctx.error(...) instead of throwing it is read the same way.
  if (value instanceof Error && codeErrors.has(value)) return declaredError(codeErrors.get(value)!, extra);
  if (value === undefined) return failure('agent_error', 'the agent returned nothing (undefined)');
  const json = asJson(value);
  if (!json.ok) return failure('agent_error', json.message);
  return { kind: 'output', output: json.value, ...extra };
}

function declaredError(declared: { code: unknown; message: string | undefined }, extra: { units?: bigint; quote?: bigint }): RunResult {
  if (typeof declared.code !== 'string' || declared.code === '') {
    return failure('agent_error', `ctx.error(code) needs a non-empty string code, got ${describeValue(declared.code)}`);
  }
  return {
    kind: 'error',
    code: declared.code,
    ...(declared.message !== undefined ? { message: truncate(declared.message, MAX_DECLARED_MESSAGE) } : {}),
    ...extra,
  };
}

function loadFailure(err: unknown): RunResult {
  if (err instanceof RuntimeUnavailableError) return failure('runtime_unavailable', truncate(err.message, MAX_FAILURE_MESSAGE));
  return failure('agent_error', `the agent failed to load: ${describeError(err)}`);
}

export function createNodeRuntime(options: NodeRuntimeOptions = {}): Runtime {
  const load = options.loadHandler ?? loadAgentModule;

  async function work(agent: AgentVersion, input: unknown, run: NodeRunContext, state: RunState): Promise<RunResult> {
    let handler: Handler;
    try {
      handler = await load(agent);
    } catch (err) {
      state.decided = true;
      return loadFailure(err);
    }
    if (typeof handler !== 'function') {
      state.decided = true;
      return failure('agent_error', 'the agent has no handler function');
    }
    if (run.signal.aborted) {
      state.decided = true;
      return abortedResult(run.signal.reason, run.timeoutMs);
    }
    const ctx = buildContext(state, run);
    try {
      options.extendContext?.(ctx, { agent, run });
      run.extendContext?.(ctx, { agent, run });
    } catch (err) {
      state.decided = true;
      return failure('runtime_unavailable', `the agent's context could not be prepared: ${describeError(err)}`);
    }
    try {
      const returned: unknown = await handler(cloneInput(input), ctx);
      return decide(state, { returned });
    } catch (threw) {
      return decide(state, { threw });
    }
  }

  return {
    async run(agent: AgentVersion, input: unknown, run: NodeRunContext): Promise<RunResult> {
      const state: RunState = { decided: false };
      if (run.signal.aborted) return abortedResult(run.signal.reason, run.timeoutMs);
      return raceSignal(
        run.signal,
        () => work(agent, input, run, state),
        () => {
          state.decided = true;
          return abortedResult(run.signal.reason, run.timeoutMs);
        },
      );
    },
  };
}
