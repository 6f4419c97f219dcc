/**
 * The pure parts of payments from outside: the platform's rates (HOLON_FX) and their inverses, micro-units and a
 * token's base units, the well-known development keys, the x402 settings (and production's refusal of a dev key),
 * and a payment's mandate (issued by the paying wallet) validating like any mandate.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { microsToUnits, unitsToMicros } from '../../shared/core/asset-units.js';
import { isWellKnownDevKey } from '../../shared/core/dev-keys.js';
import { invertRate, parseFxTable, ratesInto } from '../../shared/core/fx-table.js';
import { validateMandate } from '../../shared/core/mandate/validate.js';
import { convert, formatRate, parseRate } from '../../shared/core/money.js';
import { ConfigError, loadConfig } from '../../shared/platform/config.js';

describe('the platform’s rates (HOLON_FX)', () => {
  it('reads FROM:TO=rate pairs and refuses what is not one', () => {
    const t = parseFxTable('USD:EUR=0.92, GBP:USD=1.27');
    if (!t.ok) throw new Error(t.message);
    expect(t.pairs.map((p) => `${p.from}:${p.to}=${formatRate(p.rate)}`)).toEqual(['USD:EUR=0.92', 'GBP:USD=1.27']);
    expect(parseFxTable('')).toEqual({ ok: true, pairs: [] });
    expect(parseFxTable('USD:USD=1')).toMatchObject({ ok: false, message: expect.stringContaining('into itself') });
    expect(parseFxTable('USD:EUR=0.92,EUR:USD=1.08')).toMatchObject({ ok: false, message: expect.stringContaining('twice') });
    expect(parseFxTable('USD:EUR=0')).toMatchObject({ ok: false });
    expect(parseFxTable('USD-EUR=1')).toMatchObject({ ok: false });
  });

  it('gives rates into a currency: a pair given that way as it is, the other way inverted and rounded up', () => {
    const t = parseFxTable('USD:EUR=0.92,GBP:USD=1.27');
    if (!t.ok) throw new Error(t.message);
    const intoUsd = ratesInto('USD', t.pairs);
    expect(formatRate(intoUsd.GBP!)).toBe('1.27');
    // 1 / 0.92 = 1.0869565…, rounded up at 6 decimals.
    expect(formatRate(intoUsd.EUR!)).toBe('1.086957');
    expect(Object.keys(ratesInto('EUR', t.pairs))).toEqual(['USD']);
  });

  it('an inverted rate never undercharges: converting back and forth never loses a micro-unit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9_999_999 }), fc.bigInt({ min: 0n, max: 10n ** 15n }), (r, amount) => {
        const rate = parseRate((r / 1_000_000).toFixed(6), { maxDecimals: 6 });
        const inverse = invertRate(rate);
        // inverse ≥ 1/rate exactly: inverse × rate ≥ 1.
        expect(inverse.num * rate.num >= inverse.den * rate.den).toBe(true);
        // A price converted with the inverse is at least the exact quotient.
        expect(convert(amount, inverse) * rate.num >= amount * rate.den).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('micro-units and base units', () => {
  it('are exact one way and round down the other, for 6 to 18 decimals', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 18n }),
        fc.integer({ min: 6, max: 18 }),
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        (micros, decimals, extra) => {
          expect(unitsToMicros(microsToUnits(micros, decimals), decimals)).toBe(micros);
          const units = microsToUnits(micros, decimals) + (decimals > 6 ? extra % 10n ** BigInt(decimals - 6) : 0n);
          expect(unitsToMicros(units, decimals)).toBe(micros);
        },
      ),
    );
    expect(microsToUnits(370_000n, 6)).toBe(370_000n);
    expect(microsToUnits(1n, 18)).toBe(10n ** 12n);
    expect(() => microsToUnits(1n, 2)).toThrow(RangeError);
  });
});

describe('well-known development keys', () => {
  it('knows Anvil’s and Hardhat’s keys and keys with no entropy', () => {
    expect(isWellKnownDevKey('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')).toBe(true);
    expect(isWellKnownDevKey('0xAC0974BEC39A17E36BA4A6B4D238FF944BACB478CBED5EFCAE784D7BF4F2FF80')).toBe(true);
    expect(isWellKnownDevKey(`0x${'1'.repeat(64)}`)).toBe(true);
    expect(isWellKnownDevKey('0x3c1e2f4a5b6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d6e7f8')).toBe(false);
  });
});

const X402 = {
  HOLON_X402_NETWORK: 'eip155:84532',
  HOLON_X402_RPC_URL: 'http://127.0.0.1:8545',
  HOLON_X402_ASSET: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
};

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.message
      .split('\n')
      .slice(1)
      .map((l) => l.replace(/^- /, ''));
  }
}

describe('the x402 settings', () => {
  it('read their values and defaults', () => {
    const c = loadConfig({ ...X402, HOLON_X402_FACILITATOR_KEY: `0x${'ab12'.repeat(16)}`, HOLON_FX: 'USD:EUR=0.92' });
    expect(c.x402).toMatchObject({ network: 'eip155:84532', assetDecimals: 6, assetCurrency: 'USD', keylessPerMin: 60 });
    expect(c.fx).toBe('USD:EUR=0.92');
  });

  it('refuse what is not a network, an address, a key or a rate table, never echoing the key', () => {
    const problems = problemsOf({
      HOLON_X402_NETWORK: 'base',
      HOLON_X402_ASSET: '0x12',
      HOLON_X402_FACILITATOR_KEY: 'secret-not-a-key',
      HOLON_X402_ASSET_DECIMALS: '2',
      HOLON_FX: 'USD to EUR',
    });
    expect(problems.join('\n')).toMatch(/HOLON_X402_NETWORK must be an EVM network in CAIP-2 form/);
    expect(problems.join('\n')).toMatch(/HOLON_X402_ASSET must be the ERC-20 token's address/);
    expect(problems.join('\n')).toMatch(/HOLON_X402_FACILITATOR_KEY must be an EVM private key/);
    expect(problems.join('\n')).toMatch(/HOLON_X402_ASSET_DECIMALS must be an integer from 6 to 18/);
    expect(problems.join('\n')).toMatch(/HOLON_FX must be FROM:TO=rate pairs/);
    expect(problems.join('\n')).not.toContain('secret-not-a-key');
  });

  it('production refuses a well-known development key as the treasury', () => {
    const anvil = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
    const problems = problemsOf({ NODE_ENV: 'production', ...X402, HOLON_X402_FACILITATOR_KEY: anvil });
    expect(problems).toContain('HOLON_X402_FACILITATOR_KEY is a well-known development key: anybody can spend from it');
    expect(problems.join('\n')).not.toContain(anvil);
  });
});

describe('a payment’s mandate', () => {
  const wallet = 'x402:0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
  const doc = (over: Record<string, unknown> = {}) => ({
    id: `${wallet}/p-1a2b`,
    issuer: wallet,
    grantee: `${wallet}/caller`,
    allow: { agents: ['examples/echo-upper'] },
    budget: { total: '1.00', currency: 'USD' },
    ...over,
  });

  it('is issued by the paying wallet and validates like any mandate', () => {
    const v = validateMandate(doc());
    expect(v.ok && v.mandate.issuer).toBe(wallet);
  });

  it('keeps the wallet’s namespace, and an account cannot pass for a wallet', () => {
    expect(validateMandate(doc({ id: 'x402:0x70997970c51812dc3a010c7d01b50e0d17dc79c8/p-1a2b', grantee: 'alice/caller' })).ok).toBe(false);
    expect(validateMandate(doc({ id: `${wallet}/p-1a2b`, issuer: 'alice' })).ok).toBe(false);
    expect(validateMandate(doc({ issuer: 'x402:0x70997970C51812dc3A010C7d01b50e0d17dc79C8' })).ok).toBe(false);
    expect(validateMandate(doc({ id: 'alice/p-1a2b', issuer: 'alice', grantee: `${wallet}/caller` })).ok).toBe(false);
  });
});
