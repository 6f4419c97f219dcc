/**
 * The mandate a protocol door (MCP, A2A) calls under: hosted, an agent key's one mandate, asking in the client only
 * when the key says so; dev mode, the local operator under the mandate the request names (`X-Holon-Mandate`, or
 * `?mandate=`), else the configured default. `owner` is who created what the request starts (its tasks).
 */
import type { Request } from 'express';
import { HolonError } from '../../shared/core/errors.js';
import type { Queryable } from '../../shared/db/connect.js';
import { loadMandate } from '../../shared/mandates/store.js';
import type { Principal } from './principal.js';

export interface KeyMandate {
  mandateId: string;
  /** The key may ask for approvals in the client (elicitation); dev mode's local principal may. */
  askInClient: boolean;
  /** `key:<prefix>` hosted, `operator` in dev mode. */
  owner: string;
}

export async function keyMandateOf(
  db: Queryable,
  defaultMandate: string,
  req: Request,
  p: Extract<Principal, { kind: 'agent' | 'operator' }>,
): Promise<KeyMandate> {
  if (p.kind === 'agent') return { mandateId: p.mandateId, askInClient: p.askInClient, owner: `key:${p.keyPrefix}` };
  const named = req.get('x-holon-mandate') ?? (typeof req.query.mandate === 'string' ? req.query.mandate : undefined);
  const mandateId = named?.trim() || defaultMandate;
  if (mandateId.length > 300 || !(await loadMandate(db, mandateId))) {
    throw new HolonError('not_found', `there is no mandate ${mandateId.slice(0, 300)}: name one with the X-Holon-Mandate header or ?mandate=`);
  }
  return { mandateId, askInClient: true, owner: 'operator' };
}
