/**
 * Deciding an approval (gateway.md §5/§7): `run` approves and submits the held call at once (the stored input,
 * the exact version, the max_cost it was requested with), `grant` approves for a later re-submission with
 * `approval`, `reject` refuses. Each approval is decided once. Used by POST /v0/approvals/{id} and by the MCP
 * server's elicitation (spec/mcp.md §2).
 */
import { HolonError } from '../../core/errors.js';
import { approvalView, decideApproval, loadApproval } from './approvals.js';
import type { CallEngine } from '../engine-types.js';
import { submitCall, type Submitted } from './submit.js';

export type ApprovalDecision = 'run' | 'grant' | 'reject';

export type Decided = { kind: 'decided'; approval: ReturnType<typeof approvalView> } | { kind: 'submitted'; submitted: Submitted };

/** Throws 404 for an unknown approval and 409 for one already decided (or expired). */
export async function decideAndSubmit(engine: CallEngine, id: string, decision: ApprovalDecision): Promise<Decided> {
  const gateway = engine.resources;
  const decided = await decideApproval(gateway.db, id, decision, gateway.now());
  if (!decided) {
    const found = await loadApproval(gateway.db, id, gateway.now());
    if (!found) throw new HolonError('not_found', `there is no approval ${id}`);
    throw new HolonError('approval_decided', `approval ${id} is ${found.approval.status}; it can be decided once`);
  }
  if (decision !== 'run') return { kind: 'decided', approval: approvalView(decided.approval) };
  const a = decided.approval;
  const submitted = await submitCall(engine, {
    mandateId: a.mandateId,
    agent: `${a.agentId}@${a.agentVersion}`,
    input: decided.input,
    ...(a.maxCost !== null ? { maxCost: a.maxCost } : {}),
    preApproved: a.id,
  });
  return { kind: 'submitted', submitted };
}
