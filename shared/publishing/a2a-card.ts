/**
 * Publishing an a2a agent (docs/a2a-agents.md, "The card kept at publish"): its card is fetched through the guarded
 * client, read as the runtime reads it (an interface at the endpoint's origin, the version's skill), its signatures
 * verified when it has any (the SDK's verifyAgentCardSignature; the key from the JWS header's `jku`, fetched through
 * the guarded client, or its embedded `jwk`), and kept with the version: the runtime runs a published version on
 * this card, whatever the agent serves later.
 */
import { verifyAgentCardSignature, type AgentCard } from '@a2a-js/sdk';
import * as jose from 'jose';
import { createGuardedDispatcher, createGuardedFetch, type FetchFunction, type LookupAll } from '../platform/guarded-net.js';
import { CardError, fetchCardJson, readCard } from '../runtimes/a2a/card.js';
import { limitedFetch } from '../runtimes/a2a/limited-fetch.js';
import { networkFailure } from '../runtimes/remote.js';

/** The whole check (card, key set) may take this long. */
const CARD_TIMEOUT_MS = 10_000;
const MAX_JWKS_BYTES = 64 * 1024;
/** The most any answer (the card, a key set) may be. */
const MAX_ANSWER_BYTES = 1024 * 1024;

export interface CardSettings {
  allowPrivate: boolean;
  lookup?: LookupAll;
}

/** What the SDK's verifier takes as a key (a JWK here). */
type KeyOf = Awaited<ReturnType<Parameters<typeof verifyAgentCardSignature>[0]>>;

/** The key a signature names: from its `jku` (a JWK Set, fetched through the guard), else its embedded `jwk`. */
function keyFinder(card: AgentCard, fetch: FetchFunction, signal: AbortSignal) {
  const embedded = new Map<string, jose.JWK>();
  for (const s of card.signatures) {
    try {
      const header = jose.decodeProtectedHeader({ protected: s.protected, payload: '', signature: s.signature });
      if (header.kid && header.jwk) embedded.set(header.kid, header.jwk);
    } catch {
      // an unreadable header: the verifier refuses that signature
    }
  }
  return async (kid: string, jku?: string): Promise<KeyOf> => {
    if (jku !== undefined) {
      const response = await fetch(new URL(jku), { headers: { accept: 'application/json' }, signal });
      const text = await response.text();
      if (response.status !== 200 || text.length > MAX_JWKS_BYTES) throw new Error(`the key set at jku answered ${response.status}`);
      const set = JSON.parse(text) as { keys?: unknown };
      const key = Array.isArray(set.keys) ? (set.keys as jose.JWK[]).find((k) => k?.kid === kid) : undefined;
      if (!key) throw new Error(`the key set at jku has no key ${kid}`);
      return key as KeyOf;
    }
    const jwk = embedded.get(kid);
    if (!jwk) throw new Error(`no key for kid ${kid}: neither jku nor jwk`);
    return jwk as KeyOf;
  };
}

/**
 * The card to keep with the version, or the problem refusing the publish (a sentence for `$.runtime.endpoint`).
 * Signatures, when the card has any: at least one must verify; none → refused.
 */
export async function checkA2aCard(endpoint: string, skill: string | undefined, s: CardSettings): Promise<{ card: unknown } | { problem: string }> {
  const dispatcher = createGuardedDispatcher({ allowPrivate: s.allowPrivate, ...(s.lookup ? { lookup: s.lookup } : {}) });
  const fetch = limitedFetch(createGuardedFetch(dispatcher), MAX_ANSWER_BYTES);
  const signal = AbortSignal.timeout(CARD_TIMEOUT_MS);
  try {
    const url = new URL(endpoint);
    let json: unknown;
    try {
      json = await fetchCardJson(url, fetch, {}, signal);
    } catch (err) {
      if (err instanceof CardError) return { problem: err.message };
      const failed = networkFailure(err, CARD_TIMEOUT_MS, url);
      return { problem: `the agent card could not be fetched: ${'message' in failed ? failed.message : 'no answer'}` };
    }
    const card = readCard(json, url, skill);
    if (card.signatures.length > 0) {
      try {
        await verifyAgentCardSignature(keyFinder(card, fetch, signal))(card);
      } catch {
        return { problem: 'the agent card is signed, but no signature verifies (a forged or unverifiable signature): the card is refused' };
      }
    }
    return { card: json };
  } catch (err) {
    if (err instanceof CardError) return { problem: err.message };
    throw err;
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
}
