/**
 * The call engine: one per process, built by the composition root (services/compose.ts) from one resources
 * object, and handed to the roles — the API submits and answers, the runner runs, the settler settles, the sweeper
 * and a cancel close. Its methods are the call's phases (README.md beside this file), and the phases call each other
 * through it: a run that ends closes its call with `close`, which settles it here (`settle`) when this process runs a
 * settler, else queues the settle job. The contract the phases see: engine-types.ts.
 */
import type { CallWaiter, WaitOptions } from './answer/waiter.js';
import type { CallOutcome } from './call-outcome.js';
import type { CallEngine, CallResources, RunnerParts, RunSlot, SettleResult } from './engine-types.js';
import { runAdmitted, runCall } from './run/run-call.js';
import { createLocalRuns, type LocalRuns } from './run/run-here.js';
import { createSettleBatcher, type SettleBatcher } from './settle/batcher.js';
import { type Closing, closedWith } from './settle/settle.js';
import { submitChild } from './submit/child.js';
import { submitCall } from './submit/submit.js';
import type { ChildRequest, ParentRun, CallSubmission, Submitted } from './submit/types.js';
import { type ClaimedCall, closeCallRow, queueSettleJob } from './transitions.js';
import { inSpan } from '../platform/tracing.js';
import type { ReceiptView } from '../receipts/store.js';

export interface EngineOptions {
  /** The process's one waiter for finished calls (answer/waiter.ts). */
  waiter?: CallWaiter;
  /** This process runs a settler (`holon serve`, `holon settler`): calls closed here are settled here. */
  settlesHere?: boolean;
  /** The most calls one settlement transaction takes (group commit, settle/batcher.ts); default 64. */
  maxBatch?: number;
}

export function createCallEngine(resources: CallResources, options: EngineOptions = {}): CallEngine {
  const { waiter } = options;
  // The process's waiter hears a call settled here at once; the notice published for other processes follows.
  const batcher = createSettleBatcher(resources, {
    maxBatch: options.maxBatch ?? 64,
    ...(waiter ? { heard: (callId, receipt) => waiter.heard(callId, receipt) } : {}),
  });
  // A run started here goes through this engine, as the runner's queue jobs do (its waiter serves a running agent's ctx.call).
  const local = createLocalRuns(
    (parts, callId, admitted) => engine.runHere(parts, callId, admitted),
    (callId, e) => resources.log.error({ call: callId, err: { message: (e as Error)?.message } }, 'a run started here ended in an error'),
  );
  const engine = new Engine(resources, { batcher, local }, options.settlesHere ?? false, options.waiter);
  return engine;
}

/** What every view of one engine shares (`withWaiter`): its settle batcher and the runs it starts here. */
interface Shared {
  batcher: SettleBatcher;
  local: LocalRuns;
}

class Engine implements CallEngine {
  constructor(
    readonly resources: CallResources,
    private readonly shared: Shared,
    readonly settlesHere: boolean,
    readonly waiter: CallWaiter | undefined,
  ) {}

  takeRunSlot(): RunSlot | null {
    return this.shared.local.take();
  }

  attachRunner(parts: RunnerParts, concurrency: number): { close(): Promise<void> } {
    return this.shared.local.attach(parts, concurrency);
  }

  runHere(parts: RunnerParts, callId: string, admitted: { call: ClaimedCall; input: unknown; ranOut: () => void }): Promise<void> {
    return inSpan('holon.run', { 'holon.call_id': callId }, () => runAdmitted(this, parts, callId, admitted));
  }

  submit(sub: CallSubmission): Promise<Submitted> {
    return submitCall(this, sub);
  }

  submitChild(parent: ParentRun, child: ChildRequest): Promise<Submitted> {
    return submitChild(this, parent, child);
  }

  run(callId: string, runner: RunnerParts): Promise<void> {
    return inSpan('holon.run', { 'holon.call_id': callId }, () => runCall(this, runner, callId));
  }

  async close(callId: string, from: 'queued' | 'running', outcome: CallOutcome, facts?: Closing['facts']): Promise<boolean> {
    if (facts && from === 'running' && this.settlesHere) {
      // Closed in its settlement's own transaction (settle/settle.ts `Closing`): one commit, no read before it.
      try {
        const closing = { outcome, facts, at: new Date(this.resources.now()) };
        return (await inSpan('holon.settle', { 'holon.call_id': callId }, () => this.shared.batcher.settle({ callId, closing }))) !== 'noop';
      } catch (e) {
        this.resources.log.warn({ call: callId, err: { message: (e as Error)?.message } }, 'closing and settling here failed: the call is closed on its own');
        // The close may have been written before the failure (settleOne closes by its own UPDATE first): then it is
        // this one, and what is left is to settle it (the settle queue) — never to report it closed by someone else.
        const found = await closedWith(this.resources.db, callId, outcome).catch(() => null);
        if (found === 'final') return true;
        if (found === 'settling') {
          await queueSettleJob(this.resources, callId, 0);
          return true;
        }
      }
    }
    if (!(await closeCallRow(this.resources.db, callId, from, outcome))) return false;
    if (this.settlesHere) {
      try {
        await this.settle(callId);
        return true;
      } catch (e) {
        this.resources.log.warn({ call: callId, err: { message: (e as Error)?.message } }, 'settling here failed: the call goes to the settle queue');
      }
    }
    await queueSettleJob(this.resources, callId, 0);
    return true;
  }

  settle(callId: string): Promise<SettleResult> {
    return inSpan('holon.settle', { 'holon.call_id': callId }, async (span) => {
      const result = await this.shared.batcher.settle(callId);
      span.setAttribute('holon.settle_result', result);
      return result;
    });
  }

  answer(callId: string, timeoutMs: number, options?: WaitOptions): Promise<ReceiptView | null> {
    const { waiter } = this;
    if (!waiter) throw new Error('this call engine has no waiter: it cannot wait for a call to finish');
    return waiter.receiptOf(callId, timeoutMs, options);
  }

  withWaiter(waiter: CallWaiter): CallEngine {
    return new Engine(this.resources, this.shared, this.settlesHere, waiter);
  }
}
