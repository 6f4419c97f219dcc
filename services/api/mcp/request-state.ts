/**
 * The `requestState` of call_agent's input requests (docs/mcp.md, "Input requests"): what a round of the tool knew,
 * given to the client and given back on its retry, so that any API process resumes the call. It is sealed
 * (AES-256-GCM, shared/crypto/seal.ts) under HOLON_FILE_SECRET's key for this purpose, with the principal as the
 * additional data: the client can neither read nor alter it, and another principal's state does not open.
 *
 * It binds the round to its arguments (a digest of the tool's arguments: the agent, the input, the cost cap), to the
 * approval and the worst case the form showed, or to the call and the question it asked; it expires with the question
 * (HOLON_INPUT_TTL_S). A state that does not open, has expired or belongs to other arguments is refused (-32602).
 */
import { createHash } from 'node:crypto';
import { seal, sealingKey, unseal, type SealingKey } from '../../../shared/crypto/seal.js';
import { canonicalJson } from '../../../shared/core/canonical-json.js';

const VERSION = 'hrs1';

/** What one round of call_agent left for the next. */
export type CallAgentState =
  /** The approval form was shown for this approval, at this worst case. */
  | { step: 'approval'; approval: string; worstCase: string; digest: string; exp: number }
  /** The call asked this question; the client was given it as a form. */
  | { step: 'question'; call: string; question: number; digest: string; exp: number };

export type StateBody = { step: 'approval'; approval: string; worstCase: string } | { step: 'question'; call: string; question: number };

export interface RequestStateSeal {
  mint(owner: string, body: StateBody, digest: string): string;
  /** The state, or an Error saying why it is refused. */
  open(owner: string, state: string): CallAgentState;
}

/** The digest a state is bound to: the tool's arguments, canonically. */
export function argumentsDigest(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args)).digest('base64url');
}

export function requestStateSeal(secret: string, ttlS: number, now: () => number): RequestStateSeal {
  const key: SealingKey = sealingKey(secret, 'holon mcp request state');
  return {
    mint(owner, body, digest) {
      const state = { ...body, digest, exp: Math.floor(now() / 1000) + ttlS };
      const s = seal(key, owner, JSON.stringify(state));
      return [VERSION, s.keyId, s.iv.toString('base64url'), s.ciphertext.toString('base64url'), s.tag.toString('base64url')].join('.');
    },
    open(owner, state) {
      const parts = state.split('.');
      if (parts.length !== 5 || parts[0] !== VERSION) throw new Error('requestState is not one this gateway gave');
      const [, keyId, iv, ciphertext, tag] = parts as [string, string, string, string, string];
      const text = unseal(key, owner, {
        keyId,
        iv: Buffer.from(iv, 'base64url'),
        ciphertext: Buffer.from(ciphertext, 'base64url'),
        tag: Buffer.from(tag, 'base64url'),
      });
      const opened = JSON.parse(text) as CallAgentState;
      if (opened.exp * 1000 < now()) throw new Error('requestState has expired: call the tool again without it');
      return opened;
    },
  };
}
