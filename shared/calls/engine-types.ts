/**
 * The call engine as its phases see it: the one resources object it is built from, the waiter, and its methods — submit, run,
 * close, settle, answer, cancel — by which the phases call each other. Its one implementation is
 * `createCallEngine` (engine.ts); the phases take this interface (not engine.ts, which imports them) so that no
 * import cycle forms.
 */
import type { ServiceContext } from '../context.js';
import type { FileLinkSigner } from '../files/access.js';
import type { ReceiptView } from '../receipts/store.js';
import type { AgentVersion, RunContext, RunResult } from '../runtimes/types.js';
import type { CallWaiter, WaitOptions } from './answer/waiter.js';
import type { CallOutcome } from './call-outcome.js';
import type { CancelWatcher } from './run/cancel-watcher.js';
import type { ChildRequest, ParentRun } from './submit/types.js';
import type { CallSubmission, Submitted } from './submit/types.js';
import type { ClaimedCall } from './transitions.js';
import type { Closing } from './settle/settle.js';

/**
 * What the call's code runs on: the database, the registry, the messaging backend (queues, notifier, ephemeral
 * store), the log, the settings, the clock, the signing key and the metrics — the process's one context
 * (shared/context.ts), the very object every role of the process shares.
 */
export type CallResources = ServiceContext;

/** How a runner runs an agent: its runtimes (shared/runtimes/). */
interface RuntimeRunner {
  run(agent: AgentVersion, input: unknown, ctx: RunContext): Promise<RunResult>;
}

/** What only a runner process has, handed to `run` by services/runner/worker.ts. */
export interface RunnerParts {
  runtimes: RuntimeRunner;
  /** Hears cancellations (spec/mcp.md §3); without it, a running call can only time out. */
  cancels?: CancelWatcher;
  /** Signs the download links of the files an input names (shared/files/); without it such a call fails, unbilled. */
  fileLinks?: FileLinkSigner;
  /** Fires when the runner stops and its grace has passed: a run still going ends `gateway_restarted`, unbilled. */
  handBack?: AbortSignal;
}

/** A slot of this process's runner taken for a call about to be admitted: started once admitted `running`, else released. */
export interface RunSlot {
  start(callId: string, call: ClaimedCall, input: unknown): void;
  release(): void;
}

/** What settling one call came to (shared/calls/settle/batcher.ts). */
export type SettleResult = 'settled' | 'noop' | 'deferred';

export interface CallEngine {
  readonly resources: CallResources;
  /** Whether this process runs a settler: a call closed here is then settled here, without the settle queue's hop. */
  readonly settlesHere: boolean;
  /**
   * Waits for calls to finish (answer/waiter.ts): the process's one subscription, or the API's view of it. Without
   * it, `answer` cannot wait and a running agent gets no `ctx.call`.
   */
  readonly waiter: CallWaiter | undefined;
  /** Admission (submit/submit.ts): refused with a receipt, held for a human, or reserved and queued to run. */
  submit(sub: CallSubmission): Promise<Submitted>;
  /** A running orchestrator's child call (submit/child.ts): its declared slot matched, then the same admission. */
  submitChild(parent: ParentRun, child: ChildRequest): Promise<Submitted>;
  /** One run job (run/run-call.ts): claim, run the agent at most once, decide the outcome, close the call. */
  run(callId: string, runner: RunnerParts): Promise<void>;
  /**
   * Close the call (`from` → `settling`, transitions.ts) with its outcome and hand it to settlement: `settle` here
   * when this process runs a settler (a failure there falls back to the queue), else the settle queue. False when
   * the call was no longer in `from` (someone else closed it). With the row's `facts` (a top-level call without a
   * sub-mandate that ran here), a process that runs a settler closes it in its settlement's own transaction.
   */
  close(callId: string, from: 'queued' | 'running', outcome: CallOutcome, facts?: Closing['facts']): Promise<boolean>;
  /** Settle one call now, joining the next group commit (settle/batcher.ts): its receipt, entry and hold. */
  settle(callId: string): Promise<SettleResult>;
  /** The call's receipt once it is final (waited for at most `timeoutMs`), or null; with the engine's waiter. */
  answer(callId: string, timeoutMs: number, options?: WaitOptions): Promise<ReceiptView | null>;
  /** A free slot of this process's runner for a call about to be admitted (run/run-here.ts), or null. */
  takeRunSlot(): RunSlot | null;
  /** This process's runner: calls admitted here start here, up to `concurrency` at once; closed at its stop. */
  attachRunner(parts: RunnerParts, concurrency: number): { close(): Promise<void> };
  /** This engine with another waiter (the API's, whose waits end at its hand-back): the same settler. */
  withWaiter(waiter: CallWaiter): CallEngine;
}
