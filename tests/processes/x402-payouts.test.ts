/**
 * Paying authors out on a real chain (anvil, TestUSD): a payout moves the address's tokens and the journal by exactly
 * the amount, once; a crash after the broadcast, and one before it (the transfer dropped from the pool), are finished
 * by recovery with exactly one transfer; a transfer that reverts is reversed (the money back); two payouts of the whole
 * balance at once: one goes through; the refusals; demo credit is never in the asset's currency; and a property over
 * random payouts: what reached the chain equals what the journal paid out, and the audit is clean.
 */
import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import fc from 'fast-check';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payoutCommand } from '../../services/cli/payout.js';
import { audit } from '../../shared/ledger/audit.js';
import { postEntry } from '../../shared/ledger/entries.js';
import { ensureBalanceRow } from '../../shared/ledger/holds.js';
import { recoverPayouts, requestPayout } from '../../shared/payments/payouts.js';
import { startChain, type Chain, x402Config } from '../support/chain.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { ADMIN_KEY, send, signUp, type Account } from '../support/hosted.js';
import { deployTestUsd, type TestUsd } from '../support/solidity.js';

let chain: Chain;
let token: TestUsd;
let g: TestGateway;
let bob: Account;
let to: Hex;
let external: string;
let grants = 0;

beforeAll(async () => {
  chain = await startChain();
  token = await deployTestUsd(chain);
  to = chain.accounts[4]!.address;
  g = await startTestGateway({
    hosted: true,
    config: x402Config(chain, token.address, { keylessPerMin: 1000 }),
  });
  external = `external:x402:${chain.network}`;
  bob = await signUp(g.url, 'bob');
}, 120_000);

afterAll(async () => {
  await g?.stop();
  await chain?.stop();
});

const ctx = () => g.gw.engine.resources;

async function usd(account: string): Promise<bigint> {
  const row = (await g.db.knex('account_balances').where({ account, currency: 'USD' }).first('balance')) as { balance: string | bigint } | undefined;
  return BigInt(row?.balance ?? 0);
}

/** Earnings in USD as money from the chain would bring them (the journal only: the treasury is funded apart). */
async function earn(account: string, amount: bigint): Promise<void> {
  await ensureBalanceRow(g.db.knex, account, 'USD');
  await ensureBalanceRow(g.db.knex, external, 'USD');
  grants += 1;
  await postEntry(g.db.knex, {
    key: `x402:test:${grants}`,
    kind: 'x402-topup',
    lines: [
      { account: external, currency: 'USD', amount: -amount },
      { account, currency: 'USD', amount },
    ],
  });
}

const payout = (amount: string) => send(g.url, 'POST', '/v0/me/payouts', { key: bob.human, body: { amount } });

describe('payouts', () => {
  it('refuses without an address, a bad address, and more than the account has', async () => {
    expect((await payout('1.00')).status).toBe(400);
    expect((await send(g.url, 'PUT', '/v0/me/payout-address', { key: bob.human, body: { address: '0x1234' } })).status).toBe(400);
    const set = await send<{ payout_address: string }>(g.url, 'PUT', '/v0/me/payout-address', { key: bob.human, body: { address: to.toLowerCase() } });
    expect(set.status).toBe(200);
    expect(set.body.payout_address).toBe(`${to.slice(0, 6)}…${to.slice(-4)}`);
    const me = await send<{ account: { payout_address: string } }>(g.url, 'GET', '/v0/me', { key: bob.human });
    expect(me.body.account.payout_address).toBe(set.body.payout_address);
    const short = await payout('1.00');
    expect(short.status).toBe(402);
    expect((short.body as { error: { code: string } }).error.code).toBe('insufficient_funds');
  });

  it('a payout: the address receives exactly the amount, once, and the journal moves exactly it', async () => {
    // Bob's earnings come from a real top-up: the treasury then holds the tokens it pays out.
    const payer = privateKeyToAccount(chain.accounts[3]!.privateKey);
    await token.mint(payer.address, 20_000_000n);
    const client = new x402Client()
      .register(chain.network as never, new ExactEvmScheme(toClientEvmSigner(payer, chain.publicClient as never)))
      .setSpendControls({ allowedAssets: [{ network: chain.network as never, asset: token.address, maxAmountPerPayment: '20000000' }] });
    const topped = await wrapFetchWithPayment(fetch, client)(`${g.url}/v0/topups`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bob.human}` },
      body: JSON.stringify({ amount: '20.00' }),
    });
    expect(topped.status).toBe(201);
    const before = await token.balanceOf(to);
    const r = await payout('5.00');
    expect(r.status).toBe(201);
    const body = r.body as { id: string; state: string; transaction: Hex; amount: string };
    expect(body).toMatchObject({ state: 'paid', amount: '5.00' });
    expect((await chain.publicClient.getTransactionReceipt({ hash: body.transaction })).status).toBe('success');
    expect(await token.balanceOf(to)).toBe(before + 5_000_000n);
    expect(await usd('bob')).toBe(15_000_000n);
    expect(await usd('payouts:pending')).toBe(0n);
    expect(await usd(external)).toBe(-15_000_000n);
    const list = await send<{ payouts: Array<{ id: string; state: string }> }>(g.url, 'GET', '/v0/me/payouts', { key: bob.human });
    expect(list.body.payouts[0]).toMatchObject({ id: body.id, state: 'paid' });
  });

  it('a crash after the broadcast: recovery posts it, and the chain has one transfer', async () => {
    const before = await token.balanceOf(to);
    await chain.publicClient.request({ method: 'evm_setAutomine' as never, params: [false] as never });
    const p = await requestPayout(ctx(), 'bob', 1_000_000n, 200);
    expect(p.state).toBe('sent');
    await chain.publicClient.request({ method: 'evm_setAutomine' as never, params: [true] as never });
    await chain.publicClient.request({ method: 'evm_mine' as never, params: [] as never });
    expect(await recoverPayouts(ctx())).toBe(1);
    expect(await recoverPayouts(ctx())).toBe(0);
    expect(await token.balanceOf(to)).toBe(before + 1_000_000n);
    expect(await usd('payouts:pending')).toBe(0n);
  });

  it('a crash before the broadcast (the transfer never reached the chain): recovery sends the same bytes, once', async () => {
    const before = await token.balanceOf(to);
    await chain.publicClient.request({ method: 'evm_setAutomine' as never, params: [false] as never });
    const p = await requestPayout(ctx(), 'bob', 2_000_000n, 200);
    expect(p.state).toBe('sent');
    await chain.publicClient.request({ method: 'anvil_dropTransaction' as never, params: [p.txHash] as never });
    await chain.publicClient.request({ method: 'evm_setAutomine' as never, params: [true] as never });
    expect(await recoverPayouts(ctx())).toBe(1);
    expect(await token.balanceOf(to)).toBe(before + 2_000_000n);
    const row = (await g.db.knex('payouts').where({ id: p.id }).first('state', 'tx_hash')) as { state: string; tx_hash: string };
    expect(row).toEqual({ state: 'paid', tx_hash: p.txHash });
  });

  it('a chain out of reach after the payout is recorded: 201 as it stands (never an error to retry), and recovery pays it once', async () => {
    const rails = ctx().payments!;
    const unreachable = {
      ...ctx(),
      payments: { ...rails, treasury: { ...rails.treasury!, sign: async () => Promise.reject(new Error('fetch failed: the node is down')) } },
    };
    const before = await token.balanceOf(to);
    const p = await requestPayout(unreachable, 'bob', 1_000_000n);
    expect(p.state).toBe('pending');
    // A sweep that cannot reach the chain either goes on and says nothing was finished; the next one finishes it.
    expect(await recoverPayouts(unreachable)).toBe(0);
    expect(await recoverPayouts(ctx())).toBe(1);
    expect(await token.balanceOf(to)).toBe(before + 1_000_000n);
    expect(((await g.db.knex('payouts').where({ id: p.id }).first('state')) as { state: string }).state).toBe('paid');
  });

  it('a transfer that reverts (the treasury holds too little) is reversed: the money is back, nothing left the chain', async () => {
    await earn('bob', 1_000_000_000n);
    const before = { bob: await usd('bob'), to: await token.balanceOf(to) };
    const r = await payout('1000.00');
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ state: 'reversed', error: 'the transfer reverted on chain' });
    expect(await usd('bob')).toBe(before.bob);
    expect(await token.balanceOf(to)).toBe(before.to);
  });

  it('two payouts of the whole available balance at once: exactly one goes through', async () => {
    const all = await usd('bob');
    const whole = (Number(all) / 1e6).toFixed(6);
    const both = await Promise.all([payout(whole), payout(whole)]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 402]);
    expect(await usd('bob')).toBeGreaterThanOrEqual(0n);
  });

  it('holon payout withdraws and lists, and says what is wrong', async () => {
    await earn('bob', 1_000_000n);
    let text = '';
    const out = { write: (t: string) => (text += t) };
    expect(await payoutCommand(['0.50', '--url', g.url, '--key', bob.human], {}, out)).toBe(0);
    expect(text).toMatch(/po_[0-9a-f]+ {2}0\.50 USD → 0x\w{4}…\w{4} {2}paid {2}0x[0-9a-f]{64}/);
    text = '';
    expect(await payoutCommand(['--list'], { HOLON_URL: g.url, HOLON_KEY: bob.human }, out)).toBe(0);
    expect(text.split('\n').filter(Boolean).length).toBeGreaterThanOrEqual(2);
    expect(await payoutCommand(['1000000.00', '--url', g.url, '--key', bob.human], {}, out)).toBe(1);
    expect(await payoutCommand(['--list', '1.00', '--url', g.url, '--key', bob.human], {}, out)).toBe(2);
  });

  it('demo credit is never in the asset’s currency', async () => {
    const r = await send(g.url, 'POST', '/v0/admin/credit', { key: ADMIN_KEY, body: { account: 'bob', amount: '5.00', currency: 'USD' } });
    expect(r.status).toBe(400);
  });

  it('property: over random payouts, what reached the address equals what the journal paid out, and the audit is clean', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 3_000_000 }), { minLength: 1, maxLength: 4 }), async (amounts) => {
        await earn(
          'bob',
          amounts.reduce((a, b) => a + BigInt(b), 0n),
        );
        const start = { chain: await token.balanceOf(to), external: await usd(external) };
        for (const a of amounts) await requestPayout(ctx(), 'bob', BigInt(a));
        expect((await token.balanceOf(to)) - start.chain).toBe((await usd(external)) - start.external);
      }),
      { numRuns: 6 },
    );
    expect((await audit(g.db.knex)).problems).toEqual([]);
  });
});

describe('payouts without payments from outside', () => {
  it('answer 503 payments_off', async () => {
    const plain = await startTestGateway({ hosted: true });
    try {
      const carol = await signUp(plain.url, 'carol');
      const r = await send(plain.url, 'POST', '/v0/me/payouts', { key: carol.human, body: { amount: '1.00' } });
      expect(r.status).toBe(503);
    } finally {
      await plain.stop();
    }
  });
});
