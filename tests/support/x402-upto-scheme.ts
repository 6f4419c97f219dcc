/**
 * A test `upto` scheme for x402 v2 (docs/payments.md, "upto"), registered in the gateway's in-process facilitator the
 * way x402's own tests register schemes: the payer signs an EIP-712 authorization of at most `amount` of a token to the
 * gateway's address and approves the facilitator as an ERC-20 spender; the facilitator verifies the signature, the
 * allowance and the balance, and settles any amount up to the authorization with a real `transferFrom` on the chain.
 * Each authorization's nonce settles once. Client, server and facilitator sides, on @x402/core's interfaces.
 */
import type {
  AssetAmount,
  Network,
  PaymentPayload,
  PaymentRequirements,
  SchemeNetworkClient,
  SchemeNetworkFacilitator,
  SchemeNetworkServer,
  SettleResponse,
  VerifyResponse,
} from '@x402/core/types';
import { erc20Abi, type Hex, type PrivateKeyAccount, type PublicClient, type WalletClient, verifyTypedData } from 'viem';
import { randomBytes } from 'node:crypto';

const DOMAIN = { name: 'holon test upto', version: '1' } as const;
const TYPES = {
  Upto: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'asset', type: 'address' },
    { name: 'max', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
    { name: 'validBefore', type: 'uint256' },
  ],
} as const;

interface Authorization {
  from: Hex;
  to: Hex;
  asset: Hex;
  max: string;
  nonce: Hex;
  validBefore: string;
}

export class UptoServer implements SchemeNetworkServer {
  readonly scheme = 'upto';
  readonly defaultAssetTransferMethod = 'allowance';
  readonly paymentFlows = { allowance: { supported: ['authorization'], default: 'authorization' } } as const;
  async parsePrice(price: unknown): Promise<AssetAmount> {
    if (typeof price === 'object' && price && 'asset' in price) return price as AssetAmount;
    throw new Error('the test upto scheme takes an asset amount');
  }
  async enhancePaymentRequirements(r: PaymentRequirements): Promise<PaymentRequirements> {
    return r;
  }
}

export class UptoClient implements SchemeNetworkClient {
  readonly scheme = 'upto';
  constructor(
    private readonly account: PrivateKeyAccount,
    private readonly chainId: number,
  ) {}
  async createPaymentPayload(x402Version: number, r: PaymentRequirements) {
    const authorization: Authorization = {
      from: this.account.address,
      to: r.payTo as Hex,
      asset: r.asset as Hex,
      max: r.amount,
      nonce: `0x${randomBytes(32).toString('hex')}`,
      validBefore: String(Math.floor(Date.now() / 1000) + r.maxTimeoutSeconds),
    };
    const signature = await this.account.signTypedData({
      domain: { ...DOMAIN, chainId: this.chainId },
      types: TYPES,
      primaryType: 'Upto',
      message: { ...authorization, max: BigInt(authorization.max), validBefore: BigInt(authorization.validBefore) },
    });
    return { x402Version, payload: { authorization, signature } };
  }
}

type Wallet = WalletClient & { account: PrivateKeyAccount };

export class UptoFacilitator implements SchemeNetworkFacilitator {
  readonly scheme = 'upto';
  readonly caipFamily = 'eip155:*';
  /** Nonces settled: each authorization settles once. */
  readonly settled = new Set<string>();
  /** Runs once before the next settlement (a test withdraws the payer's allowance on chain there). */
  beforeNextSettle: (() => Promise<void>) | undefined;
  constructor(
    private readonly wallet: Wallet,
    private readonly chain: PublicClient,
    private readonly chainId: number,
  ) {}
  getExtra(): Record<string, unknown> | undefined {
    return undefined;
  }
  getSigners(): string[] {
    return [this.wallet.account.address];
  }
  private async check(payload: PaymentPayload, r: PaymentRequirements): Promise<{ ok: true; auth: Authorization } | { ok: false; reason: string }> {
    const { authorization: auth, signature } = payload.payload as { authorization: Authorization; signature: Hex };
    if (!auth || typeof signature !== 'string') return { ok: false, reason: 'invalid_payload' };
    const valid = await verifyTypedData({
      address: auth.from,
      domain: { ...DOMAIN, chainId: this.chainId },
      types: TYPES,
      primaryType: 'Upto',
      message: { ...auth, max: BigInt(auth.max), validBefore: BigInt(auth.validBefore) },
      signature,
    }).catch(() => false);
    if (!valid) return { ok: false, reason: 'invalid_signature' };
    if (auth.to.toLowerCase() !== r.payTo.toLowerCase() || auth.asset.toLowerCase() !== r.asset.toLowerCase()) return { ok: false, reason: 'wrong_recipient' };
    if (BigInt(r.amount) > BigInt(auth.max)) return { ok: false, reason: 'amount_above_authorization' };
    if (BigInt(auth.validBefore) * 1000n < BigInt(Date.now())) return { ok: false, reason: 'authorization_expired' };
    if (this.settled.has(auth.nonce)) return { ok: false, reason: 'nonce_used' };
    const [allowance, balance] = await Promise.all([
      this.chain.readContract({ address: auth.asset, abi: erc20Abi, functionName: 'allowance', args: [auth.from, this.wallet.account.address] }),
      this.chain.readContract({ address: auth.asset, abi: erc20Abi, functionName: 'balanceOf', args: [auth.from] }),
    ]);
    if (allowance < BigInt(r.amount)) return { ok: false, reason: 'insufficient_allowance' };
    if (balance < BigInt(r.amount)) return { ok: false, reason: 'insufficient_funds' };
    return { ok: true, auth };
  }
  async verify(payload: PaymentPayload, r: PaymentRequirements): Promise<VerifyResponse> {
    const c = await this.check(payload, r);
    return c.ok ? { isValid: true, payer: c.auth.from } : { isValid: false, invalidReason: c.reason };
  }
  async settle(payload: PaymentPayload, r: PaymentRequirements): Promise<SettleResponse> {
    const network = r.network as Network;
    const before = this.beforeNextSettle;
    this.beforeNextSettle = undefined;
    await before?.();
    const c = await this.check(payload, r);
    if (!c.ok) return { success: false, errorReason: c.reason, transaction: '', network };
    this.settled.add(c.auth.nonce);
    const hash = await this.wallet.writeContract({
      address: c.auth.asset,
      abi: erc20Abi,
      functionName: 'transferFrom',
      args: [c.auth.from, c.auth.to, BigInt(r.amount)],
      chain: null,
      account: this.wallet.account,
    });
    const receipt = await this.chain.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') return { success: false, errorReason: 'transfer_reverted', transaction: hash, network };
    return { success: true, transaction: hash, network, payer: c.auth.from, amount: r.amount };
  }
}
