/**
 * Topping an account up with x402 on a real chain (anvil, TestUSD): 402 with an `exact` requirement for the amount,
 * paid with @x402/fetch, credited once in the asset's currency (`x402:<network>:<transaction>`), spent by a mandate in
 * that currency like any balance; a replayed payment refused; and a top-up whose process died between the transfer
 * and the credit is credited by the settler's sweep, once, from what the chain says.
 */
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit } from '../../shared/ledger/audit.js';
import { paymentKey } from '../../shared/payments/payment-key.js';
import { insertPayment, updatePayment } from '../../shared/payments/payment-rows.js';
import { finishTopups } from '../../shared/payments/topups.js';
import { startChain, type Chain, x402Config } from '../support/chain.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { send, signUp, type Account } from '../support/hosted.js';
import { deployTestUsd, type TestUsd } from '../support/solidity.js';

let chain: Chain;
let token: TestUsd;
let g: TestGateway;
let alice: Account;
let treasury: Hex;
const payer = () => privateKeyToAccount(chain.accounts[2]!.privateKey);

beforeAll(async () => {
  chain = await startChain();
  token = await deployTestUsd(chain);
  treasury = chain.accounts[0]!.address;
  await token.mint(payer().address, 50_000_000n);
  g = await startTestGateway({
    hosted: true,
    config: x402Config(chain, token.address, { keylessPerMin: 1000 }),
  });
  alice = await signUp(g.url, 'alice');
}, 120_000);

afterAll(async () => {
  await g?.stop();
  await chain?.stop();
});

function client() {
  return new x402Client()
    .register(chain.network as never, new ExactEvmScheme(toClientEvmSigner(payer(), chain.publicClient as never)))
    .setSpendControls({ allowedAssets: [{ network: chain.network as never, asset: token.address, maxAmountPerPayment: '20000000' }] });
}

const topUp = (f: typeof fetch, amount: string, headers: Record<string, string> = {}) =>
  f(`${g.url}/v0/topups`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${alice.human}`, ...headers },
    body: JSON.stringify({ amount }),
  });

async function usdBalance(account: string): Promise<bigint> {
  const row = (await g.db.knex('account_balances').where({ account, currency: 'USD' }).first('balance')) as { balance: string | bigint } | undefined;
  return BigInt(row?.balance ?? 0);
}

describe('topping up with x402', () => {
  it('asks for exactly the amount, then credits it once the transfer is on chain', async () => {
    const asked = await topUp(fetch, '10.00');
    expect(asked.status).toBe(402);
    const required = decodePaymentRequiredHeader(asked.headers.get('payment-required')!);
    expect(required.accepts).toHaveLength(1);
    expect(required.accepts[0]).toMatchObject({ scheme: 'exact', amount: '10000000', payTo: treasury, asset: token.address, network: chain.network });

    const before = await token.balanceOf(treasury);
    const r = await topUp(wrapFetchWithPayment(fetch, client()), '10.00');
    expect(r.status).toBe(201);
    const body = (await r.json()) as { entry: { key: string; amount: string; currency: string }; transaction: string; balance: { balance: string } };
    expect(body.entry).toMatchObject({ key: `x402:${chain.network}:${body.transaction}`, amount: '10.00', currency: 'USD' });
    expect(body.balance.balance).toBe('10.00');
    expect(await token.balanceOf(treasury)).toBe(before + 10_000_000n);
    expect(await usdBalance('alice')).toBe(10_000_000n);
    expect(await usdBalance(`external:x402:${chain.network}`)).toBe(-10_000_000n);
  });

  it('a mandate in the asset’s currency spends the topped-up balance like any other', async () => {
    const m = await send(g.url, 'POST', '/v0/mandates', {
      key: alice.human,
      body: { id: 'usd', grantee: 'alice/bot', allow: { agents: ['fixtures/*'] }, budget: { total: '5.00', currency: 'USD' } },
    });
    expect(m.status).toBe(201);
    const r = await send(g.url, 'POST', '/v0/calls', { key: alice.human, body: { mandate: 'alice/usd', agent: 'fixtures/usd', input: {} } });
    expect(r.status).toBe(200);
    expect(await usdBalance('alice')).toBe(10_000_000n - 100_000n);
  });

  it('a keyless paid call’s receipt and call are an account’s 404 and a keyless reader’s 401', async () => {
    const r = await wrapFetchWithPayment(fetch, client())(`${g.url}/v0/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'fixtures/usd', input: {} }),
    });
    expect(r.status).toBe(200);
    const { receipt } = (await r.json()) as { receipt: { id: string; payer: string } };
    expect(receipt.payer).toBe(`external:x402:${chain.network}`);
    for (const path of [`/v0/receipts/${receipt.id}`, `/v0/receipts/${receipt.id}/proof`, `/v0/calls/${receipt.id}`]) {
      expect((await send(g.url, 'GET', path, { key: alice.human })).status).toBe(404);
      expect((await send(g.url, 'GET', path, {})).status).toBe(401);
    }
    const listed = await send(g.url, 'GET', '/v0/receipts', { key: alice.human });
    expect(JSON.stringify(listed.body)).not.toContain(receipt.id);
  });

  it('the same payment again is refused, and nothing more is credited', async () => {
    const asked = await topUp(fetch, '1.00');
    const payload = await client().createPaymentPayload(decodePaymentRequiredHeader(asked.headers.get('payment-required')!));
    const header = { 'payment-signature': encodePaymentSignatureHeader(payload) };
    expect((await topUp(fetch, '1.00', header)).status).toBe(201);
    const balance = await usdBalance('alice');
    const again = await topUp(fetch, '1.00', header);
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('payment_replayed');
    expect(await usdBalance('alice')).toBe(balance);
  });

  it('a top-up whose process died after the transfer is credited by the sweep, once', async () => {
    const rails = g.gw.engine.resources.payments!;
    const asked = await topUp(fetch, '2.00');
    const required = decodePaymentRequiredHeader(asked.headers.get('payment-required')!);
    const payload: PaymentPayload = await client().createPaymentPayload(required);
    const requirements = required.accepts[0]!;
    const key = paymentKey(payload);
    // What a process does up to the transfer: the payment recorded, marked collecting, settled on chain — then it dies.
    await insertPayment(g.db.knex, rails.sealing, {
      key,
      purpose: 'topup',
      network: rails.network,
      scheme: 'exact',
      payer: payer().address.toLowerCase(),
      authorized: 2_000_000n,
      account: 'alice',
      claim: { payload, requirements },
    });
    await updatePayment(g.db.knex, key, { state: 'collecting' });
    const settled = await rails.server.settlePayment(payload, requirements);
    expect(settled.success).toBe(true);
    const balance = await usdBalance('alice');

    expect(await finishTopups(g.gw.engine.resources)).toBe(1);
    expect(await usdBalance('alice')).toBe(balance + 2_000_000n);
    const entry = await g.db
      .knex('journal_entries')
      .where({ key: `x402:${chain.network}:${settled.transaction}` })
      .first('id');
    expect(entry).toBeDefined();
    // Again: nothing more.
    expect(await finishTopups(g.gw.engine.resources)).toBe(0);
    expect(await usdBalance('alice')).toBe(balance + 2_000_000n);
    expect((await audit(g.db.knex)).problems).toEqual([]);
  });
});
