/**
 * One case of a suite, through the same runtime path as a call (shared/runtimes/gateway-runtimes.ts: the guarded
 * client for published agents, the endpoint credential, the hard timeout — the case's `timeout_s`, else the
 * manifest's), unbilled and unmeasured: no call row, no receipt, no call_events. A run that failed on the way
 * (runtime_unavailable, agent_error: a flaky network) is tried once more. Fixtures the input names get signed links
 * valid only a little longer than the case may run.
 */
import { compileInterface } from '../../shared/core/manifest/interface-validator.js';
import { caseFixtures, judgeCase, type CaseJudgement, type SuiteCase } from '../../shared/core/evals/index.js';
import type { FileLink, FileLinkSigner } from '../../shared/files/access.js';
import { evalLinkUrl } from '../../shared/files/links.js';
import type { LoadedSuite } from '../../shared/evaluation/suites.js';
import type { CaseDetail } from '../../shared/evaluation/store.js';
import { runDeadline } from '../../shared/runtimes/abort.js';
import type { AgentVersion, RunResult, Runtime } from '../../shared/runtimes/types.js';

/** What a public case keeps of the output it got, at most (a larger one is summarised by its size). */
const MAX_DETAIL_BYTES = 16 * 1024;

export interface CaseRun {
  judgement: CaseJudgement;
  durationMs: number;
  /** The failure code when the run failed on the way (timeout, runtime_unavailable…). */
  failure?: string;
}

const RETRIED: ReadonlySet<string> = new Set(['runtime_unavailable', 'agent_error']);

/** Where a case runs: the evaluator's runtimes, its file-link signer and its clock. */
interface CaseEnv {
  runtimes: Runtime;
  signer: FileLinkSigner;
  now: () => number;
  /** Fires when the evaluator hands its evaluations back (its stop grace passed): the case ends at once, unrecorded. */
  handBack?: AbortSignal;
}

/** One case to run: the agent, its loaded suite, the case, and the id its run goes under. */
interface CaseJob {
  agent: AgentVersion;
  suite: LoadedSuite;
  case: SuiteCase;
  callId: string;
}

export async function runCase(env: CaseEnv, job: CaseJob): Promise<CaseRun> {
  const { runtimes, signer, now } = env;
  const { agent, case: c, callId } = job;
  const timeoutMs = (c.timeout_s ?? agent.manifest.runtime.timeoutS) * 1000;
  const started = Date.now();
  const attempt = async (): Promise<RunResult> => {
    const deadline = runDeadline(timeoutMs, env.handBack);
    const files = fixtureLinks(signer, job, now(), timeoutMs);
    try {
      return await runtimes.run(agent, c.input, { callId, signal: deadline.signal, timeoutMs, ...(files ? { files } : {}) });
    } catch {
      return { kind: 'failure', code: 'agent_error', message: 'the runtime failed' };
    } finally {
      deadline.dispose();
    }
  };
  let result = await attempt();
  if (result.kind === 'failure' && RETRIED.has(result.code)) result = await attempt();
  const { manifest } = agent;
  const judgement = judgeCase(c, result, (output) => compileInterface(manifest).output(output), Object.keys(manifest.interface.errors));
  return { judgement, durationMs: Date.now() - started, ...(result.kind === 'failure' ? { failure: result.code } : {}) };
}

/** A judged case in the metrics: passed, failed, or `unreachable` (failed because the agent's endpoint could not be reached). */
export function caseOutcome(run: CaseRun): 'passed' | 'failed' | 'unreachable' {
  if (run.judgement.passed) return 'passed';
  return run.failure === 'runtime_unavailable' ? 'unreachable' : 'failed';
}

/** The links of the fixtures a case names, valid for the case's time and a minute (never longer than 15 minutes). */
function fixtureLinks(signer: FileLinkSigner, job: Pick<CaseJob, 'suite' | 'case'>, nowMs: number, timeoutMs: number): Record<string, FileLink> | undefined {
  const { suite: loaded, case: c } = job;
  const names = caseFixtures(c);
  if (names.length === 0) return undefined;
  const exp = Math.floor(nowMs / 1000) + Math.min(15 * 60, Math.ceil(timeoutMs / 1000) + 60);
  const out: Record<string, FileLink> = {};
  for (const name of names) {
    const f = loaded.fixtures.get(name);
    if (!f) continue; // the loader refused a suite naming a missing fixture: unreachable
    out[f.handle] = {
      url: evalLinkUrl(signer.secret, signer.origin(), { capability: loaded.capability, name }, exp),
      content_type: f.contentType,
      size: f.size,
      sha256: f.sha256,
      expires: new Date(exp * 1000).toISOString(),
    };
  }
  return out;
}

/** What a public case shows: expected, got (summarised past MAX_DETAIL_BYTES), why it failed. Hidden cases: nothing. */
export function caseDetail(c: SuiteCase, run: CaseRun): CaseDetail {
  const got = JSON.stringify(run.judgement.got);
  return {
    expected: c.expect,
    got: got.length <= MAX_DETAIL_BYTES ? run.judgement.got : { summary: `an answer of ${got.length} bytes, too large to show` },
    ...(run.judgement.reasons.length ? { reasons: run.judgement.reasons } : {}),
  };
}
