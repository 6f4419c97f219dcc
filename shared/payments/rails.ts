/**
 * The payment rails: what the gateway needs to take money from outside and send it back out (docs/payments.md). Built
 * once per process from the settings (HOLON_X402_*, HOLON_FX) when HOLON_X402_NETWORK is set: the chain, the asset
 * and its EIP-712 domain, the address paid to, the platform's rates, and one x402 resource server (@x402/core) whose
 * facilitator is either external (HTTP, the standard `/verify`, `/settle`, `/supported`) or in process (an
 * `x402Facilitator` with @x402/evm's `exact` scheme, submitting with the treasury key). The treasury (payouts) exists
 * only with HOLON_X402_RPC_URL and HOLON_X402_FACILITATOR_KEY.
 */
import { HTTPFacilitatorClient, x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, SchemeNetworkFacilitator, SchemeNetworkServer } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { ExactEvmScheme as ExactEvmFacilitator } from '@x402/evm/exact/facilitator';
import { UptoEvmScheme as UptoEvmServer } from '@x402/evm/upto/server';
import { UptoEvmScheme as UptoEvmFacilitator } from '@x402/evm/upto/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { createPublicClient, createWalletClient, http, publicActions, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { type FxPair, parseFxTable } from '../core/fx-table.js';
import { type SealingKey, sealingKey } from '../crypto/seal.js';
import { DEMO_CREDIT_CURRENCY } from '../ledger/demo-credit.js';
import { ConfigError } from '../platform/settings/declare.js';
import type { X402Settings } from '../platform/settings/index.js';
import { createTreasury, type Treasury } from './treasury.js';

interface PaymentAsset {
  /** The ERC-20 token's address. */
  address: Hex;
  /** Its EIP-712 domain. */
  name: string;
  version: string;
  decimals: number;
  /** The currency one whole token counts in (HOLON_X402_ASSET_CURRENCY). */
  currency: string;
}

export interface PaymentRails {
  /** CAIP-2, e.g. `eip155:8453`. */
  network: Network;
  asset: PaymentAsset;
  /** Where payments and top-ups are sent. */
  payTo: Hex;
  /** The platform's exchange rates (HOLON_FX). */
  fx: readonly FxPair[];
  /** The x402 resource server: builds requirements, verifies and settles through the facilitator. */
  server: x402ResourceServer;
  /** Sends payouts; null without an RPC endpoint and a key (an external facilitator alone pays nobody out). */
  treasury: Treasury | null;
  /** The schemes the facilitator settles on this network (`exact`, and `upto` where it is registered). */
  schemes: ReadonlySet<string>;
  /** The ledger's account money from this chain comes from and goes to: `external:x402:<network>`. */
  externalAccount: string;
  /** Keyless paid calls per minute, per client address and per payer wallet (HOLON_X402_RATE_PER_MIN). */
  keylessPerMin: number;
  /** The chain, read directly (HOLON_X402_RPC_URL); null with an external facilitator and no RPC endpoint. */
  chain: PublicClient | null;
  /** Seals what a payer signed until it is collected (payment-rows.ts). */
  sealing: SealingKey;
}

/** Extra schemes, for a facilitator or a chain that offers what @x402/evm's defaults do not (tests register `upto` so). */
export interface RailsInputs {
  schemes?: ReadonlyArray<{ scheme: string; server: SchemeNetworkServer; facilitator?: SchemeNetworkFacilitator }>;
}

const ERC20_META = [
  { type: 'function', name: 'name', stateMutability: 'view', inputs: [], outputs: [{ type: 'string' }] },
  { type: 'function', name: 'version', stateMutability: 'view', inputs: [], outputs: [{ type: 'string' }] },
] as const;

/** The rules between the settings; every problem at once, as loadConfig reports its own. */
function problemsOf(s: X402Settings, fx: string | undefined, fileSecret: string | undefined): string[] {
  const out: string[] = [];
  if (!s.facilitatorKey && !fileSecret)
    out.push('HOLON_X402_FACILITATOR_URL without HOLON_X402_FACILITATOR_KEY needs HOLON_FILE_SECRET: payments are kept sealed until they are collected');
  if (!s.asset) out.push('HOLON_X402_NETWORK needs HOLON_X402_ASSET (the ERC-20 token payments are made in)');
  if (!s.facilitatorUrl && !(s.rpcUrl && s.facilitatorKey))
    out.push('HOLON_X402_NETWORK needs HOLON_X402_FACILITATOR_URL, or HOLON_X402_RPC_URL and HOLON_X402_FACILITATOR_KEY (the gateway settles itself)');
  if (!s.payTo && !s.facilitatorKey) out.push('HOLON_X402_NETWORK needs HOLON_X402_PAY_TO, or HOLON_X402_FACILITATOR_KEY (whose address is paid)');
  // Sign-up and admin credit are EUR: real money and demo credit never share a currency.
  if (s.assetCurrency === DEMO_CREDIT_CURRENCY)
    out.push(`HOLON_X402_ASSET_CURRENCY must not be ${DEMO_CREDIT_CURRENCY}, the currency of demo credit: real money and demo credit never mix`);
  const table = parseFxTable(fx);
  if (!table.ok) out.push(`HOLON_FX: ${table.message}`);
  return out;
}

/** The rails of these settings, or null when x402 is off. Throws a ConfigError naming every problem. */
export async function buildRails(
  s: X402Settings,
  secrets: { fx: string | undefined; fileSecret: string | undefined },
  inputs: RailsInputs = {},
): Promise<PaymentRails | null> {
  if (!s.network) return null;
  const fxText = secrets.fx;
  const problems = problemsOf(s, fxText, secrets.fileSecret);
  if (problems.length) throw new ConfigError(`configuration problems:\n- ${problems.join('\n- ')}`);
  const network = s.network as Network;
  const account = s.facilitatorKey ? privateKeyToAccount(s.facilitatorKey as Hex) : null;
  const chain = s.rpcUrl ? createPublicClient({ transport: http(s.rpcUrl) }) : null;
  const asset: PaymentAsset = {
    address: s.asset as Hex,
    name: s.assetName ?? (await readString(chain, s.asset as Hex, 'name')) ?? '',
    version: s.assetVersion ?? (await readString(chain, s.asset as Hex, 'version')) ?? '1',
    decimals: s.assetDecimals,
    currency: s.assetCurrency,
  };
  if (!asset.name) throw new ConfigError("configuration problems:\n- HOLON_X402_ASSET_NAME is needed: the token's name() could not be read");
  const wallet = s.facilitatorKey && s.rpcUrl ? walletFor(s.facilitatorKey as Hex, s.rpcUrl) : null;
  const facilitator: FacilitatorClient = s.facilitatorUrl
    ? new HTTPFacilitatorClient({ url: s.facilitatorUrl })
    : inProcessFacilitator(network, wallet!, inputs);
  const server = new x402ResourceServer(facilitator).register(network, new ExactEvmServer());
  // `upto`: @x402/evm's (Permit2 and x402's upto proxy on the chain), unless one is given (tests register their own).
  if (!overridesUpto(inputs)) server.register(network, new UptoEvmServer());
  for (const extra of inputs.schemes ?? []) server.register(network, extra.server);
  await server.initialize();
  const schemes = new Set(['exact', 'upto', ...(inputs.schemes ?? []).map((x) => x.scheme)].filter((scheme) => server.getSupportedKind(2, network, scheme)));
  return {
    network,
    asset,
    payTo: (s.payTo ?? account!.address) as Hex,
    fx: (parseFxTable(fxText) as { ok: true; pairs: FxPair[] }).pairs,
    server,
    treasury: wallet ? createTreasury(wallet, asset.address) : null,
    schemes,
    externalAccount: `external:x402:${network}`,
    keylessPerMin: s.keylessPerMin,
    chain: chain as PublicClient | null,
    sealing: sealingKey((s.facilitatorKey ?? secrets.fileSecret)!, 'holon x402 payment claim'),
  };
}

const overridesUpto = (inputs: RailsInputs) => (inputs.schemes ?? []).some((s) => s.scheme === 'upto');

type Wallet = ReturnType<typeof walletFor>;
const walletFor = (key: Hex, url: string) => createWalletClient({ account: privateKeyToAccount(key), transport: http(url) }).extend(publicActions);

function inProcessFacilitator(network: Network, wallet: Wallet, inputs: RailsInputs): FacilitatorClient {
  const signer = toFacilitatorEvmSigner({
    address: wallet.account.address,
    readContract: (a) => wallet.readContract(a as Parameters<Wallet['readContract']>[0]),
    verifyTypedData: (a) => wallet.verifyTypedData(a as Parameters<Wallet['verifyTypedData']>[0]),
    writeContract: (a) => wallet.writeContract(a as Parameters<Wallet['writeContract']>[0]),
    sendTransaction: (a) => wallet.sendTransaction(a as Parameters<Wallet['sendTransaction']>[0]),
    waitForTransactionReceipt: (a) => wallet.waitForTransactionReceipt(a),
    getCode: (a) => wallet.getCode(a),
  });
  const f = new x402Facilitator().register(network, new ExactEvmFacilitator(signer));
  if (!overridesUpto(inputs)) f.register(network, new UptoEvmFacilitator(signer));
  for (const extra of inputs.schemes ?? []) if (extra.facilitator) f.register(network, extra.facilitator);
  // The same facilitator an HTTP one would be, called in process (its getSupported answers without a promise).
  return {
    verify: (p, r) => f.verify(p, r),
    settle: (p, r) => f.settle(p, r),
    getSupported: async () => f.getSupported() as Awaited<ReturnType<FacilitatorClient['getSupported']>>,
  };
}

async function readString(chain: ReturnType<typeof createPublicClient> | null, address: Hex, fn: 'name' | 'version'): Promise<string | undefined> {
  if (!chain) return undefined;
  try {
    return (await chain.readContract({ address, abi: ERC20_META, functionName: fn })) as string;
  } catch {
    return undefined;
  }
}
