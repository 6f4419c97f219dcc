/**
 * Who an A2A request is, for the SDK's transports: the key's mandate (key-mandate.ts), what the request is for (an
 * agent's interfaces or the gateway's) and the gateway's public origin, carried as the SDK's `User` into every method.
 */
import type { User } from '@a2a-js/sdk/server';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { KeyMandate } from '../key-mandate.js';

export type A2aTarget = { kind: 'agent'; id: string } | { kind: 'gateway' };

export interface A2aCaller extends KeyMandate {
  target: A2aTarget;
  /** No key, payments from outside on: each call is paid with x402 (paid.ts); no mandate, no tasks to read. */
  paying?: boolean;
  /** The gateway's public origin, for links (a receipt's proof). */
  base: string;
}

export class A2aUser implements User {
  constructor(readonly caller: A2aCaller) {}
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return this.caller.owner;
  }
}

export function callerOf(context: ServerCallContext): A2aCaller {
  const user = context.user;
  if (!(user instanceof A2aUser)) throw new Error('an A2A request reached the handler without its caller');
  return user.caller;
}
