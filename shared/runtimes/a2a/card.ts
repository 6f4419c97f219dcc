/**
 * An A2A agent's card (docs/a2a-agents.md): fetched from `runtime.endpoint` (the card's own URL) and read as the
 * SDK's AgentCard, with Holon's checks: at least one interface of a binding Holon speaks (JSON-RPC, HTTP+JSON), every
 * such interface at the endpoint's origin (a card cannot send Holon's calls elsewhere), and the skill the version
 * offers. The runtime reads cards this way at call time (unpublished agents) and publishing before keeping one.
 */
import { AgentCard } from '@a2a-js/sdk';
import type { FetchFunction } from '../../platform/guarded-net.js';
import { truncate } from '../messages.js';

/** The bindings Holon's client speaks (the SDK's transport names). */
const BINDINGS: ReadonlySet<string> = new Set(['jsonrpc', 'http+json']);
/** The largest card read. */
const MAX_CARD_BYTES = 256 * 1024;

/** A card that could not be used: the message says why (never billed: runtime_unavailable, or a publish refusal). */
export class CardError extends Error {
  override readonly name = 'CardError';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * GET the card at `url` and parse its JSON. A status other than 200, a body that is not JSON or larger than 256 KB
 * is a CardError; a network error (or the guard's refusal) is thrown as it is.
 */
export async function fetchCardJson(url: URL, fetch: FetchFunction, headers: Record<string, string>, signal: AbortSignal): Promise<unknown> {
  const response = await fetch(url, { headers: { ...headers, accept: 'application/json' }, signal });
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    throw new CardError(`the agent card at ${url.origin}${url.pathname} answered ${response.status}`);
  }
  const length = Number(response.headers.get('content-length'));
  if (Number.isFinite(length) && length > MAX_CARD_BYTES) {
    await response.body?.cancel().catch(() => undefined);
    throw new CardError('the agent card is larger than 256 KB');
  }
  const text = await response.text();
  if (Buffer.byteLength(text) > MAX_CARD_BYTES) throw new CardError('the agent card is larger than 256 KB');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new CardError('the agent card is not JSON');
  }
}

/** The interfaces Holon may use, or why there is none / one is elsewhere. */
function usableInterfaces(card: AgentCard, endpoint: URL): string | undefined {
  const usable = card.supportedInterfaces.filter((i) => BINDINGS.has(i.protocolBinding.toLowerCase()));
  if (usable.length === 0) return 'the agent card has no JSONRPC or HTTP+JSON interface in supportedInterfaces';
  for (const i of usable) {
    let origin: string;
    try {
      origin = new URL(i.url).origin;
    } catch {
      return `the agent card's interface URL ${JSON.stringify(truncate(i.url, 100))} is not a URL`;
    }
    if (origin !== endpoint.origin) {
      return `the agent card's ${i.protocolBinding} interface is at ${truncate(origin, 100)}, not at the endpoint's origin ${endpoint.origin}`;
    }
  }
  return undefined;
}

/**
 * A card's JSON read as an AgentCard and checked against the version's endpoint and skill. Throws a CardError
 * naming what is wrong.
 */
export function readCard(json: unknown, endpoint: URL, skill: string | undefined): AgentCard {
  if (!isObject(json) || !Array.isArray(json.supportedInterfaces)) throw new CardError('the agent card is not an A2A agent card (no supportedInterfaces)');
  let card: AgentCard;
  try {
    card = AgentCard.fromJSON(json);
  } catch {
    throw new CardError('the agent card is not an A2A agent card');
  }
  const wrong = usableInterfaces(card, endpoint);
  if (wrong) throw new CardError(wrong);
  if (skill !== undefined && !card.skills.some((s) => s.id === skill)) {
    throw new CardError(`the agent card offers no skill "${truncate(skill, 128)}" (runtime.skill)`);
  }
  return card;
}
