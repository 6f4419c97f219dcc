/**
 * What each MCP tool does (spec/mcp.md §1), under the connection's one mandate. Handlers answer a ToolAnswer or
 * throw a HolonError (turned into `isError` with `{error: {code, message}}` by the server). Everything another
 * agent or an author wrote reaches the text blocks through `untrusted()`.
 */
import { listPendingApprovals, loadApproval, approvalView } from '../../../shared/calls/submit/approvals.js';
import { describeAgent, searchCatalogue } from '../../../shared/catalogue/catalogue.js';
import type { CallWaiter } from '../../../shared/calls/answer/waiter.js';
import type { CallEngine } from '../../../shared/calls/engine-types.js';
import type { ServiceContext } from '../../../shared/context.js';
import { loadMandate, mandateView } from '../../../shared/mandates/store.js';
import { loadReceiptTree, type ReceiptView } from '../../../shared/receipts/store.js';
import { HolonError } from '../../../shared/core/errors.js';
import { mandateTreeScope, ownOrNotFound } from '../principal.js';
import { listTasks } from '../../../shared/calls/tasks.js';
import type { IdArgs, ListArgs, SearchArgs } from './tool-args.js';
import type { RequestStateSeal } from './request-state.js';
import { untrusted, untrustedJson } from './untrusted.js';
import type { JsonObject } from '../../../shared/core/json.js';

/** Who is connected: the one mandate everything runs under, and whether a human sits at the client. */
export interface McpPrincipal {
  mandateId: string;
  /** The key may ask for approvals in the client (elicitation); dev mode's local principal may. */
  askInClient: boolean;
  /** Who created what this connection starts (its MCP tasks): `key:<prefix>` hosted, `operator` in dev mode. */
  owner?: string;
  /** A keyless session (payments from outside on): no mandate; call_agent is paid per call (paid-call-agent.ts). */
  paying?: boolean;
}

export interface McpDeps {
  ctx: ServiceContext;
  /** The call engine (shared/calls/engine.ts): admission and cancellation of the calls this server makes. */
  engine: CallEngine;
  waiter: CallWaiter;
  /** How often call_agent reports progress while a call is queued or running. */
  progressIntervalMs: number;
  /** The longest call_agent waits for a human's answer to an approval form. */
  elicitationTimeoutMs: number;
  /** Seals and opens call_agent's requestState (request-state.ts). */
  requestState: RequestStateSeal;
}

export interface ToolAnswer {
  /** The tool's answer, checked against its output schema before it is sent. */
  structured: JsonObject;
  text: string;
  isError?: boolean;
  /** The result's `_meta` (a paid call's `x402/payment-response`). */
  meta?: Record<string, unknown>;
}

export function describeReceipt(r: ReceiptView): string {
  const cost = r.billed ? `${r.cost.total} ${r.currency ?? ''}`.trim() : 'nothing';
  return `receipt ${r.id}: ${r.agent ?? 'no agent'} ${r.status}${r.error ? ` (${r.error})` : ''}, charged ${cost}${r.children.length ? `, ${r.children.length} delegated call(s)` : ''}`;
}

/** What searchCatalogue answers under a mandate (it always has one here). */
type MandateSearch = Extract<Awaited<ReturnType<typeof searchCatalogue>>, { denied: unknown }>;

export async function searchAgents(deps: McpDeps, who: McpPrincipal, args: SearchArgs): Promise<ToolAnswer> {
  const { q, capability } = args;
  // With a mandate, the search answers in the mandate's currency and lists what the mandate denies.
  const found = (await searchCatalogue(deps.ctx, { mandateId: who.mandateId, ...(q ? { q } : {}), ...(capability ? { capability } : {}) })) as MandateSearch;
  const lines = found.agents.map(
    (a) =>
      `- ${String(a.id)}@${String(a.version)}: worst case ${String(a.worst_case ?? 'unknown')} ${found.currency}, evaluation ${String(a.evaluation?.status ?? 'none')} — ${untrusted(String(a.summary))}`,
  );
  const denied = found.denied.map((d) => `- ${d.id}@${d.version}: ${d.reasons.join('; ')}`);
  return {
    structured: found,
    text: [
      `${found.agents.length} agent(s) this mandate may hire${found.agents.length ? ':' : '.'}`,
      ...lines,
      ...(denied.length ? [`${denied.length} not allowed by the mandate:`, ...denied] : []),
    ].join('\n'),
  };
}

/** One agent; its text says what call_agent's `input` must be: the input schema and an example input. */
export async function getAgent(deps: McpDeps, _who: McpPrincipal, args: IdArgs): Promise<ToolAnswer> {
  const agent = await describeAgent(deps.ctx, args.id);
  return {
    structured: agent,
    text:
      `${agent.id}@${agent.version} (${agent.pricing.model}, ${agent.pricing.currency}; data policy attested by the author, not verified; evaluation ${agent.evaluation.status}). ` +
      `call_agent's "input" is a JSON object matching input_schema; example_input is one the author gives.\n${untrustedJson({
        summary: agent.summary,
        description: agent.description,
        input_schema: agent.interface.input,
        example_input: agent.example_input,
        errors: agent.interface.errors,
      })}`,
  };
}

export async function getReceipt(deps: McpDeps, who: McpPrincipal, args: IdArgs): Promise<ToolAnswer> {
  const { id } = args;
  // Visible only within the connection's mandate and the sub-mandates derived from it; any other is indistinguishable
  // from one that does not exist.
  const notFound = `there is no receipt ${id} under mandate ${who.mandateId}`;
  const receipt = ownOrNotFound(mandateTreeScope(who.mandateId), await loadReceiptTree(deps.ctx.db, id), (r) => r.mandate, notFound);
  return { structured: { ...receipt }, text: describeReceipt(receipt) };
}

export async function listApprovals(deps: McpDeps, who: McpPrincipal): Promise<ToolAnswer> {
  const pending = await listPendingApprovals(deps.ctx.db, deps.ctx.now(), who.mandateId);
  const approvals = pending.map((p) => approvalView(p.approval, p.input));
  return {
    structured: { approvals },
    text: approvals.length
      ? approvals.map((a) => `- ${a.id}: ${a.agent}, worst case ${a.worst_case} ${a.currency}: ${a.reasons.join('; ')}`).join('\n')
      : 'no pending approvals',
  };
}

export async function getApproval(deps: McpDeps, who: McpPrincipal, args: IdArgs): Promise<ToolAnswer> {
  const { id } = args;
  const notFound = `there is no approval ${id} under mandate ${who.mandateId}`;
  const found = ownOrNotFound(mandateTreeScope(who.mandateId), await loadApproval(deps.ctx.db, id, deps.ctx.now()), (a) => a.approval.mandateId, notFound);
  const view = approvalView(found.approval, found.input);
  return { structured: view, text: `approval ${view.id}: ${view.status} (${view.agent}, worst case ${view.worst_case} ${view.currency})` };
}

export async function getBudget(deps: McpDeps, who: McpPrincipal): Promise<ToolAnswer> {
  const stored = await loadMandate(deps.ctx.db, who.mandateId);
  if (!stored) throw new HolonError('not_found', `there is no mandate ${who.mandateId}`);
  const { budget } = mandateView(stored);
  const structured = { mandate: who.mandateId, ...budget };
  return {
    structured,
    text: `mandate ${who.mandateId}: ${budget.remaining} ${budget.currency} remaining of ${budget.total} (spent ${budget.spent}, reserved ${budget.reserved})`,
  };
}

/** The calls this principal started as tasks, newest first (the listing of 2026-07-28, which has no tasks/list). */
export async function listCalls(deps: McpDeps, who: McpPrincipal, args: ListArgs): Promise<ToolAnswer> {
  if (!who.owner) throw new HolonError('unauthorized', 'list_calls needs an agent key');
  let page: Awaited<ReturnType<typeof listTasks>>;
  try {
    page = await listTasks(deps.ctx.db, { owner: who.owner, mandateId: who.mandateId }, deps.ctx.settings.resultTtlS * 1000, args.cursor);
  } catch (e) {
    throw new HolonError('invalid_request', (e as Error).message);
  }
  const calls = page.tasks.map((t) => ({
    id: t.taskId,
    status: t.status,
    ...(t.statusMessage ? { status_message: t.statusMessage } : {}),
    created_at: t.createdAt,
    last_updated_at: t.lastUpdatedAt,
  }));
  return {
    structured: { calls, ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}) },
    text: calls.length ? calls.map((c) => `- ${c.id}: ${c.status}`).join('\n') : 'no calls run as tasks',
  };
}
