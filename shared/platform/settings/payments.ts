/**
 * Money from outside (docs/payments.md): x402 on a chain, its asset, the facilitator that settles, the treasury, the
 * platform's exchange rates. x402 is on when HOLON_X402_NETWORK is set; the rules between these settings are checked
 * where the rails are built (shared/payments/rails.ts), at start-up.
 */
import { isWellKnownDevKey } from '../../core/dev-keys.js';
import { inSection, setting } from './declare.js';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const payers = ['api', 'runner', 'settler'] as const;

/** `FROM:TO=rate` pairs, comma-separated: 1 FROM is `rate` TO (shared/core/fx-table.ts reads them). */
const FX_PATTERN = /^\s*[A-Z]{3}:[A-Z]{3}=[0-9]+(\.[0-9]+)?\s*(,\s*[A-Z]{3}:[A-Z]{3}=[0-9]+(\.[0-9]+)?\s*)*$/;

export const PAYMENTS = inSection('payments', {
  x402: {
    network: setting.string({
      env: 'HOLON_X402_NETWORK',
      pattern: /^eip155:[1-9][0-9]{0,18}$/,
      mustBe: 'must be an EVM network in CAIP-2 form, such as eip155:8453 (Base) or eip155:84532 (Base Sepolia)',
      doc: 'turns x402 and MPP payments on: the chain (CAIP-2) payments, top-ups and payouts use',
      roles: payers,
    }),
    facilitatorUrl: setting.url({
      env: 'HOLON_X402_FACILITATOR_URL',
      doc: 'an external x402 facilitator (its `/verify`, `/settle` and `/supported`); unset: the gateway settles on the chain itself (`HOLON_X402_RPC_URL`, `HOLON_X402_FACILITATOR_KEY`)',
      roles: payers,
    }),
    rpcUrl: setting.endpoint({
      env: 'HOLON_X402_RPC_URL',
      doc: "the chain's JSON-RPC endpoint: the in-process facilitator submits payments there, and payouts are sent there",
      roles: payers,
    }),
    facilitatorKey: setting.secret({
      env: 'HOLON_X402_FACILITATOR_KEY',
      generated: false,
      shape: { pattern: /^0x[0-9a-fA-F]{64}$/, problem: 'HOLON_X402_FACILITATOR_KEY must be an EVM private key: 0x and 64 hex digits' },
      doc: "the treasury's private key: it submits payments (in-process facilitator) and sends payouts; by default also the address payments are made to",
      roles: payers,
      production: {
        check: (key) => (key && isWellKnownDevKey(key) ? 'HOLON_X402_FACILITATOR_KEY is a well-known development key: anybody can spend from it' : undefined),
        refuses: 'with a well-known development key',
      },
    }),
    asset: setting.string({
      env: 'HOLON_X402_ASSET',
      pattern: ADDRESS,
      mustBe: "must be the ERC-20 token's address: 0x and 40 hex digits",
      doc: 'the ERC-20 token (EIP-3009) payments, top-ups and payouts are made in',
      roles: payers,
    }),
    assetName: setting.string({
      env: 'HOLON_X402_ASSET_NAME',
      doc: "the token's EIP-712 domain name; unset: read from the token (`name()`)",
      roles: payers,
    }),
    assetVersion: setting.string({
      env: 'HOLON_X402_ASSET_VERSION',
      doc: "the token's EIP-712 domain version; unset: read from the token (`version()`), else `1`",
      roles: payers,
    }),
    assetDecimals: setting.int({
      env: 'HOLON_X402_ASSET_DECIMALS',
      default: 6,
      min: 6,
      max: 18,
      doc: "the token's decimals (at least 6: a micro-unit is always a whole number of the token's base units)",
      roles: payers,
    }),
    assetCurrency: setting.string({
      env: 'HOLON_X402_ASSET_CURRENCY',
      default: 'USD',
      pattern: /^[A-Z]{3}$/,
      mustBe: 'must be a currency code of three capital letters, such as USD',
      doc: 'the currency one whole token counts in; demo and admin credit are never in it, and only it is ever paid out',
      roles: payers,
    }),
    payTo: setting.string({
      env: 'HOLON_X402_PAY_TO',
      pattern: ADDRESS,
      mustBe: 'must be an address: 0x and 40 hex digits',
      shown: "the facilitator key's address",
      doc: 'the address payments and top-ups are made to',
      roles: payers,
    }),
    keylessPerMin: setting.int({
      env: 'HOLON_X402_RATE_PER_MIN',
      default: 60,
      min: 1,
      max: 1_000_000,
      doc: 'keyless paid calls per minute, per client address and per payer wallet each',
      roles: ['api'],
    }),
  },
  fx: setting.string({
    env: 'HOLON_FX',
    pattern: FX_PATTERN,
    mustBe: 'must be FROM:TO=rate pairs separated by commas, such as USD:EUR=0.92 (1 USD is 0.92 EUR)',
    doc: "the platform's exchange rates (`USD:EUR=0.92`: 1 USD is 0.92 EUR), used both ways for paid calls and shown in every 402 and receipt",
    roles: payers,
  }),
});
