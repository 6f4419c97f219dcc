/**
 * The treasury: the account HOLON_X402_FACILITATOR_KEY controls, from which payouts are sent as ERC-20 transfers.
 * A transfer is signed first and its hash known before it is broadcast, so that a payout row can record the hash
 * (and the signed bytes) before anything leaves: after a crash the same transaction is looked up or sent again,
 * never a second one (shared/payments/payouts.ts).
 */
import { encodeFunctionData, erc20Abi, keccak256, type Hex, type PublicActions, type WalletClient, type Account, type Chain, type Transport } from 'viem';

interface SignedTransfer {
  hash: Hex;
  raw: Hex;
}

type TransferState = 'succeeded' | 'reverted' | 'not_found';

export interface Treasury {
  address: Hex;
  /** A signed transfer of `units` of the asset to `to` with this nonce, not yet sent. */
  sign(to: Hex, units: bigint, nonce: number): Promise<SignedTransfer>;
  /** The next nonce the chain expects from the treasury, pending transactions counted. */
  pendingNonce(): Promise<number>;
  /** Sends a signed transfer; sending one the chain already has is not an error. */
  broadcast(raw: Hex): Promise<void>;
  /** Waits up to `timeoutMs` for the transfer to be mined; `not_found` when it was not. */
  await(hash: Hex, timeoutMs: number): Promise<TransferState>;
  /** The treasury's balance of the asset, in base units. */
  balance(): Promise<bigint>;
  /** How many of its transactions are mined: a transfer with a lower nonce that is not mined never will be. */
  confirmedNonce(): Promise<number>;
}

/** Enough for any ERC-20 `transfer` (USDC's takes about 60 000). */
const TRANSFER_GAS = 150_000n;

type Wallet = WalletClient<Transport, Chain | undefined, Account> & PublicActions<Transport, Chain | undefined>;

export function createTreasury(wallet: Wallet, asset: Hex): Treasury {
  const address = wallet.account.address;
  return {
    address,
    async sign(to, units, nonce) {
      const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, units] });
      const chainId = await wallet.getChainId();
      // A fixed gas limit, not an estimate: a transfer the token would refuse is still signed, mined and seen to revert
      // (the payout is then reversed) instead of failing before anything is recorded.
      const request = await wallet.prepareTransactionRequest({
        account: wallet.account,
        to: asset,
        data,
        chain: null,
        chainId,
        nonce,
        gas: TRANSFER_GAS,
      } as never);
      const raw = await wallet.signTransaction(request as never);
      return { hash: keccak256(raw), raw };
    },
    async broadcast(raw) {
      try {
        await wallet.sendRawTransaction({ serializedTransaction: raw });
      } catch (e) {
        if (!/already known|nonce too low|already imported/i.test((e as Error).message)) throw e;
      }
    },
    async await(hash, timeoutMs) {
      try {
        const receipt = await wallet.waitForTransactionReceipt({ hash, timeout: timeoutMs });
        return receipt.status === 'success' ? 'succeeded' : 'reverted';
      } catch {
        return 'not_found';
      }
    },
    balance: () => wallet.readContract({ address: asset, abi: erc20Abi, functionName: 'balanceOf', args: [address] }),
    confirmedNonce: () => wallet.getTransactionCount({ address, blockTag: 'latest' }),
    pendingNonce: () => wallet.getTransactionCount({ address, blockTag: 'pending' }),
  };
}
