/** What the A2A request handler (handler.ts) and its paid calls (paid.ts) are given. */
import type { AgentCard } from '@a2a-js/sdk';
import type { CallWaiter } from '../../../shared/calls/answer/waiter.js';
import type { CallEngine } from '../../../shared/calls/engine-types.js';
import type { ServiceContext } from '../../../shared/context.js';
import type { SealingKey } from '../../../shared/crypto/seal.js';

export interface A2aDeps {
  ctx: ServiceContext;
  engine: CallEngine;
  waiter: CallWaiter;
  /** How long a blocking SendMessage waits for the call's end before it answers the task as it stands. */
  syncWaitMs: number;
  /** A card the transports check the requested protocol version against (the interfaces every card has). */
  versionCard: AgentCard;
  /** Push tokens are sealed under it (HOLON_FILE_SECRET); without it a push config cannot carry a token. */
  pushKey?: SealingKey;
  /** Hosted: a push URL must be public unless private endpoints are allowed (as a REST callback_url). */
  callbackGuard?: { allowPrivate: boolean };
}
