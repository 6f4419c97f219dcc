/**
 * Whether an EIP-3009 authorization was already used on chain, and by which transaction: what a settlement asks before
 * submitting a payment again after it lost the facilitator's answer (collect.ts), so that a payment that went through
 * is counted as collected instead of failing as a replay. Needs the chain (HOLON_X402_RPC_URL); answers `unknown`
 * without it or for a payload that is not EIP-3009.
 */
import type { PaymentPayload } from '@x402/core/types';
import { type Hex, parseAbiItem, type PublicClient } from 'viem';

const STATE_ABI = [
  {
    type: 'function',
    name: 'authorizationState',
    stateMutability: 'view',
    inputs: [{ type: 'address' }, { type: 'bytes32' }],
    outputs: [{ type: 'bool' }],
  },
] as const;
const USED = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)');

export type AuthorizationState = { used: true; transaction: string | null } | { used: false } | { used: 'unknown' };

export async function authorizationState(chain: PublicClient | null, asset: Hex, payload: PaymentPayload): Promise<AuthorizationState> {
  const auth = (payload.payload as { authorization?: { from?: string; nonce?: string } }).authorization;
  if (!chain || !auth?.from || !auth.nonce) return { used: 'unknown' };
  const from = auth.from as Hex;
  const nonce = auth.nonce as Hex;
  const used = await chain.readContract({ address: asset, abi: STATE_ABI, functionName: 'authorizationState', args: [from, nonce] });
  if (!used) return { used: false };
  const logs = await chain.getLogs({ address: asset, event: USED, args: { authorizer: from, nonce }, fromBlock: 'earliest' });
  return { used: true, transaction: logs[0]?.transactionHash ?? null };
}
