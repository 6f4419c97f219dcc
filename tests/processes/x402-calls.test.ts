/**
 * Paying per call with x402 v2 on a real chain (anvil, a test stablecoin with EIP-3009): the 402 and its decoded
 * requirements; a paid `exact` call through @x402/fetch whose on-chain transfer equals the billed amount and whose
 * journal matches to the micro-unit, with PAYMENT-RESPONSE and the gateway's signed offer-receipt; a replayed payment
 * refused; an unbilled call moving no token; `upto` (the test scheme's real `transferFrom`) settling 0.37 of a 1.00
 * authorization; a payment that cannot be collected leaving the call unbilled (`payment_failed`); and a property over
 * random sequences of paid calls: the tokens collected on chain equal, to the unit, what the journal credited, and the
 * ledger's audit is clean.
 */
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { x402Client } from '@x402/core/client';
import type { PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { toClientEvmSigner } from '@x402/evm';
import { verifyReceiptSignatureJWS } from '@x402/extensions/offer-receipt';
import { appendPaymentIdentifierToExtensions, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { wrapFetchWithPayment } from '@x402/fetch';
import fc from 'fast-check';
import { Challenge, Credential, Receipt } from 'mppx';
import { Mppx, evm } from 'mppx/client';
import { erc20Abi, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { TaskState } from '@a2a-js/sdk';
import { audit } from '../../shared/ledger/audit.js';
import { a2aClient, dataMessage } from '../support/a2a-clients.js';
import { saveMandate } from '../../shared/mandates/store.js';
import { collectForCall } from '../../shared/payments/collect.js';
import { paymentMandate } from '../../shared/payments/paid-mandate.js';
import { paymentKey } from '../../shared/payments/payment-key.js';
import { insertPayment, updatePayment } from '../../shared/payments/payment-rows.js';
import { startChain, type Chain, x402Config } from '../support/chain.js';
import { deployTestUsd, type TestUsd } from '../support/solidity.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { UptoClient, UptoFacilitator, UptoServer } from '../support/x402-upto-scheme.js';

let chain: Chain;
let token: TestUsd;
let g: TestGateway;
let treasury: Hex;
let upto: UptoFacilitator;
const payerKey = () => chain.accounts[1]!.privateKey;
const payer = () => privateKeyToAccount(payerKey());

beforeAll(async () => {
  chain = await startChain();
  token = await deployTestUsd(chain);
  const treasuryKey = chain.accounts[0]!.privateKey;
  treasury = privateKeyToAccount(treasuryKey).address;
  await token.mint(payer().address, 100_000_000n);
  // The upto scheme's facilitator spends what the payer approved it for: the treasury's key submits.
  await setAllowance(10n ** 30n);
  upto = new UptoFacilitator(chain.walletClient(treasuryKey) as never, chain.publicClient, chain.chainId);
  g = await startTestGateway({
    config: x402Config(chain, token.address, { keylessPerMin: 10_000, fx: 'EUR:USD=1.25' }),
    payments: { schemes: [{ scheme: 'upto', server: new UptoServer(), facilitator: upto }] },
  });
}, 120_000);

afterAll(async () => {
  await g?.stop();
  await chain?.stop();
});

/** The payer's ERC-20 allowance to the treasury (the upto scheme's spender), set on chain. */
async function setAllowance(amount: bigint): Promise<void> {
  const hash = await chain
    .walletClient(payerKey())
    .writeContract({ address: token.address, abi: erc20Abi, functionName: 'approve', args: [treasury, amount], chain: null } as never);
  await chain.publicClient.waitForTransactionReceipt({ hash });
}

const balanceOf = (who: Hex) => chain.publicClient.readContract({ address: token.address, abi: erc20Abi, functionName: 'balanceOf', args: [who] });

/**
 * A payer's x402 client: @x402/evm's exact scheme and the test upto scheme, choosing `scheme`, allowed to spend the
 * test token up to 2 of it per payment (a payer's spend controls).
 */
function payerClient(scheme: 'exact' | 'upto' = 'exact') {
  const signer = toClientEvmSigner(payer(), chain.publicClient as never);
  return new x402Client((_v, accepts) => accepts.find((a) => a.scheme === scheme) ?? accepts[0]!)
    .register(chain.network as never, new ExactEvmScheme(signer))
    .register(chain.network as never, new UptoClient(payer(), chain.chainId))
    .setSpendControls({ allowedAssets: [{ network: chain.network as never, asset: token.address, maxAmountPerPayment: '2000000' }] });
}

/** A payer's fetch: @x402/fetch over `payerClient`. */
const payingFetch = (scheme: 'exact' | 'upto') => wrapFetchWithPayment(fetch, payerClient(scheme));

/** A payer's fetch whose payments name `id` in x402's payment-identifier extension (a client extension, as x402's own). */
const identifiedFetch = (id: string) =>
  wrapFetchWithPayment(
    fetch,
    payerClient('exact').registerExtension({
      key: PAYMENT_IDENTIFIER,
      enrichPaymentPayload: async (payload, required) => ({
        ...payload,
        extensions: appendPaymentIdentifierToExtensions(structuredClone(required.extensions ?? {}), id),
      }),
    }),
  );

const call = (f: typeof fetch, body: unknown, headers: Record<string, string> = {}) =>
  f(`${g.url}/v0/calls`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

/** The journal's lines of an entry, by account. */
async function linesOf(key: string): Promise<Record<string, bigint>> {
  const rows = (await g.db
    .knex('journal_lines as l')
    .join('journal_entries as e', 'e.id', 'l.entry_id')
    .where('e.key', key)
    .select('l.account', 'l.amount')) as Array<{
    account: string;
    amount: string | bigint;
  }>;
  return Object.fromEntries(rows.map((r) => [r.account, BigInt(r.amount)]));
}

const EXTERNAL = () => `external:x402:${chain.network}`;

describe('paying per call with x402', () => {
  it('answers 402 with the requirements: exact and upto for a per_run price, the bazaar extension, the quote in words', async () => {
    const r = await fetch(`${g.url}/v0/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'fixtures/usd', input: {} }),
    });
    expect(r.status).toBe(402);
    expect(r.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const required: PaymentRequired = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    expect(required.x402Version).toBe(2);
    expect(required.resource.url).toBe(`${g.url}/v0/calls`);
    expect(required.accepts.map((a) => a.scheme)).toEqual(['exact', 'upto']);
    for (const a of required.accepts) {
      expect(a).toMatchObject({ network: chain.network, amount: '100000', payTo: treasury, asset: token.address, extra: { name: 'Test USD', version: '2' } });
      expect(a.maxTimeoutSeconds).toBe(70);
    }
    expect(required.extensions?.bazaar).toBeDefined();
    const body = (await r.json()) as { error: { code: string }; quote: { pay: { amount: string; units: string } } };
    expect(body.error.code).toBe('payment_required');
    expect(body.quote.pay).toMatchObject({ amount: '0.100000', units: '100000' });
  });

  it('a worst case in another currency is converted at the platform’s rate, rounded up, and only upto is offered for a quote', async () => {
    const r = await call(fetch, { agent: 'fixtures/quote', input: { quote: '0.10' } });
    expect(r.status).toBe(402);
    const required = decodePaymentRequiredHeader(r.headers.get('payment-required')!);
    expect(required.accepts.map((a) => [a.scheme, a.amount])).toEqual([['upto', '1250000']]);
    const body = (await r.json()) as { quote: { worst_case: unknown; rate: unknown } };
    expect(body.quote.worst_case).toEqual({ amount: '1.00', currency: 'EUR' });
    expect(body.quote.rate).toEqual({ from: 'EUR', to: 'USD', rate: '1.25' });
  });

  it('an exact payment: the token moves exactly the price, the journal credits exactly it, and the answer carries the transaction and a signed receipt', async () => {
    const before = { payer: await balanceOf(payer().address), treasury: await balanceOf(treasury) };
    const r = await call(payingFetch('exact'), { agent: 'fixtures/usd', input: {} });
    expect(r.status).toBe(200);
    const body = (await r.json()) as {
      status: string;
      receipt: { id: string; billed: boolean; payer: string; cost: { total: string }; payment: Record<string, unknown> };
    };
    expect(body.status).toBe('succeeded');
    const response = decodePaymentResponseHeader(r.headers.get('payment-response')!);
    expect(response).toMatchObject({ success: true, network: chain.network, payer: payer().address.toLowerCase() });
    const mined = await chain.publicClient.getTransactionReceipt({ hash: response.transaction as Hex });
    expect(mined.status).toBe('success');
    expect(await balanceOf(payer().address)).toBe(before.payer - 100_000n);
    expect(await balanceOf(treasury)).toBe(before.treasury + 100_000n);
    expect(body.receipt.payer).toBe(EXTERNAL());
    expect(body.receipt.payment).toEqual({
      scheme: 'exact',
      network: chain.network,
      payer: payer().address.toLowerCase(),
      amount: '0.10',
      currency: 'USD',
      transaction: response.transaction,
    });
    expect(await linesOf(`settle:${body.receipt.id}`)).toEqual({ [EXTERNAL()]: -100_000n, holon: 10_000n, fixtures: 90_000n });
    // The offer-receipt extension: x402's JWS receipt, signed with the gateway's key (/.well-known/jwks.json).
    const jwks = (await (await fetch(`${g.url}/.well-known/jwks.json`)).json()) as { keys: Array<Record<string, unknown>> };
    const signed = (response.extensions!['offer-receipt'] as { info: { receipt: { format: 'jws'; signature: string } } }).info.receipt;
    const claims = await verifyReceiptSignatureJWS(signed, jwks.keys[0] as never);
    expect(claims).toMatchObject({
      network: chain.network,
      payer: payer().address.toLowerCase(),
      transaction: response.transaction,
      resourceUrl: `${g.url}/v0/calls`,
    });
  });

  it('the same payment again is refused and moves nothing', async () => {
    const first = await call(fetch, { agent: 'fixtures/usd', input: {} });
    const required = decodePaymentRequiredHeader(first.headers.get('payment-required')!);
    const payload = await payerClient('exact').createPaymentPayload(required);
    const header = { 'payment-signature': encodePaymentSignatureHeader(payload) };
    expect((await call(fetch, { agent: 'fixtures/usd', input: {} }, header)).status).toBe(200);
    const before = await balanceOf(payer().address);
    const again = await call(fetch, { agent: 'fixtures/usd', input: {} }, header);
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('payment_replayed');
    expect(await balanceOf(payer().address)).toBe(before);
  });

  it('an unbilled call (the agent fails) moves no token and credits nobody', async () => {
    const before = await balanceOf(payer().address);
    const r = await call(payingFetch('exact'), { agent: 'fixtures/success-only', input: { fail: true } });
    expect(r.status).toBe(502);
    const body = (await r.json()) as { receipt: { id: string; billed: boolean; payment: Record<string, unknown> } };
    expect(body.receipt.billed).toBe(false);
    expect(body.receipt.payment).toMatchObject({ scheme: 'exact', amount: '0.00', transaction: null });
    expect(await balanceOf(payer().address)).toBe(before);
    expect(
      await g.db
        .knex('journal_entries')
        .where({ key: `settle:${body.receipt.id}` })
        .first(),
    ).toBeUndefined();
  });

  it('upto: billed 0.37 of a 1.00 authorization settles 0.37 on chain, and the journal says the same', async () => {
    const before = { payer: await balanceOf(payer().address), treasury: await balanceOf(treasury) };
    // max_cost 1.00 USD caps the quote agent's worst case (1.25 USD) at 1.00; it quotes 0.296 EUR = 0.37 USD.
    const r = await call(payingFetch('upto'), { agent: 'fixtures/quote', input: { quote: '0.296' }, max_cost: '1.00' });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { receipt: { id: string; worst_case: string; cost: { total: string }; payment: Record<string, unknown> } };
    expect(body.receipt.worst_case).toBe('1.00');
    expect(body.receipt.cost.total).toBe('0.37');
    expect(body.receipt.payment).toMatchObject({ scheme: 'upto', amount: '0.37', rate: { from: 'EUR', to: 'USD', rate: '1.25' } });
    expect(await balanceOf(payer().address)).toBe(before.payer - 370_000n);
    expect(await balanceOf(treasury)).toBe(before.treasury + 370_000n);
    const lines = await linesOf(`settle:${body.receipt.id}`);
    expect(lines[EXTERNAL()]).toBe(-370_000n);
    expect(Object.values(lines).reduce((a, b) => a + b, 0n)).toBe(0n);
  });

  it('upto for an unbilled call settles nothing at all', async () => {
    const settled = upto.settled.size;
    const before = await balanceOf(payer().address);
    const r = await call(payingFetch('upto'), { agent: 'fixtures/success-only', input: { fail: true } });
    expect(r.status).toBe(502);
    expect(upto.settled.size).toBe(settled);
    expect(await balanceOf(payer().address)).toBe(before);
  });

  it('a payment that cannot be collected leaves the call unbilled (payment_failed): nothing collected, nothing credited', async () => {
    // The payer withdraws the allowance the upto authorization relies on while the call runs: the transfer fails.
    const slow = await call(fetch, { agent: 'fixtures/quote', input: { quote: '0.10' } });
    const required = decodePaymentRequiredHeader(slow.headers.get('payment-required')!);
    const payload = await payerClient('upto').createPaymentPayload(required);
    upto.beforeNextSettle = () => setAllowance(0n);
    const before = await balanceOf(payer().address);
    const r = await call(fetch, { agent: 'fixtures/quote', input: { quote: '0.10' } }, { 'payment-signature': encodePaymentSignatureHeader(payload) });
    expect(r.status).toBe(502);
    const body = (await r.json()) as { error: { code: string }; receipt: { id: string; billed: boolean; error: string; payment: Record<string, unknown> } };
    expect(body.receipt).toMatchObject({ billed: false, error: 'payment_failed' });
    expect(body.receipt.payment).toMatchObject({ amount: '0.00', transaction: null });
    expect(await balanceOf(payer().address)).toBe(before);
    expect(
      await g.db
        .knex('journal_entries')
        .where({ key: `settle:${body.receipt.id}` })
        .first(),
    ).toBeUndefined();
    await setAllowance(10n ** 30n);
  });

  it('a settlement that lost the facilitator’s answer asks the chain, and counts a transfer that went through, once', async () => {
    const ctx = g.gw.engine.resources;
    const rails = ctx.payments!;
    const asked = await call(fetch, { agent: 'fixtures/usd', input: {} });
    const required = decodePaymentRequiredHeader(asked.headers.get('payment-required')!);
    const payload = await payerClient('exact').createPaymentPayload(required);
    const requirements = required.accepts.find((a) => a.scheme === 'exact')!;
    const usd = ctx.registry.resolve('fixtures/usd');
    if (!usd.ok) throw new Error(usd.message);
    const mandate = paymentMandate(rails, {
      payer: payer().address.toLowerCase(),
      name: 'p-lost-answer',
      manifest: usd.agent.manifest,
      budget: 100_000n,
      expiresAt: Date.now() + 3_600_000,
    });
    await saveMandate(g.db.knex, mandate, ctx.signingKey);
    const key = paymentKey(payload);
    await insertPayment(g.db.knex, rails.sealing, {
      key,
      purpose: 'call',
      network: rails.network,
      scheme: 'exact',
      payer: payer().address.toLowerCase(),
      authorized: 100_000n,
      mandateId: mandate.id,
      claim: { payload, requirements },
    });
    // A settler marked it collecting, asked the facilitator, and died with the transfer on chain and no answer.
    await updatePayment(g.db.knex, key, { state: 'collecting' });
    const transfer = await rails.server.settlePayment(payload, requirements);
    expect(transfer.success).toBe(true);
    const before = await balanceOf(payer().address);
    const collected = await collectForCall(ctx, { mandateId: mandate.id, billedMicros: 100_000n });
    expect(collected).toMatchObject({ failed: false, receipt: { amount: '0.10', transaction: transfer.transaction } });
    expect(await balanceOf(payer().address)).toBe(before);
    expect(await collectForCall(ctx, { mandateId: mandate.id, billedMicros: 100_000n })).toMatchObject({
      failed: false,
      receipt: { transaction: transfer.transaction },
    });
  });

  it('an Idempotency-Key sent again with a new payment answers the first call, and the new payment is never taken', async () => {
    const headers = { 'idempotency-key': 'paid-once-1' };
    const first = await call(payingFetch('exact'), { agent: 'fixtures/usd', input: {} }, headers);
    expect(first.status).toBe(200);
    const firstBody = (await first.json()) as { receipt: { id: string } };
    const before = await balanceOf(payer().address);
    const again = await call(payingFetch('exact'), { agent: 'fixtures/usd', input: {} }, headers);
    expect(again.status).toBe(200);
    const body = (await again.json()) as { replayed: boolean; receipt: { id: string } };
    expect(body).toMatchObject({ replayed: true, receipt: { id: firstBody.receipt.id } });
    expect(await balanceOf(payer().address)).toBe(before);
  });

  it('x402’s payment-identifier replays like an Idempotency-Key: the first call’s answer, the new payment never taken', async () => {
    const asked = decodePaymentRequiredHeader((await call(fetch, { agent: 'fixtures/usd', input: {} })).headers.get('payment-required')!);
    expect(asked.extensions?.[PAYMENT_IDENTIFIER]).toMatchObject({ info: { required: false } });
    const id = `pay_${'a1b2c3d4'.repeat(3)}`;
    const first = await call(identifiedFetch(id), { agent: 'fixtures/usd', input: {} });
    expect(first.status).toBe(200);
    const firstBody = (await first.json()) as { receipt: { id: string }; output: unknown };
    const before = await balanceOf(payer().address);
    const again = await call(identifiedFetch(id), { agent: 'fixtures/usd', input: {} });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ replayed: true, receipt: { id: firstBody.receipt.id } });
    expect(decodePaymentResponseHeader(again.headers.get('payment-response')!)).toMatchObject({ success: true });
    expect(await balanceOf(payer().address)).toBe(before);
    // Another id is another call, paid again.
    const other = await call(identifiedFetch(`pay_${'e5f6a7b8'.repeat(3)}`), { agent: 'fixtures/usd', input: {} });
    expect(other.status).toBe(200);
    expect(((await other.json()) as { receipt: { id: string } }).receipt.id).not.toBe(firstBody.receipt.id);
    expect(await balanceOf(payer().address)).toBe(before - 100_000n);
    // An id that is not one (too short) is a 400, and nothing is taken.
    const bad = await call(identifiedFetch('short'), { agent: 'fixtures/usd', input: {} }).catch((e: Error) => e);
    expect(bad).toBeInstanceOf(Error);
    const payload = await payerClient('exact').createPaymentPayload(asked);
    const refused = await call(
      fetch,
      { agent: 'fixtures/usd', input: {} },
      {
        'payment-signature': encodePaymentSignatureHeader({ ...payload, extensions: { [PAYMENT_IDENTIFIER]: { info: { required: false, id: 'no!' } } } }),
      },
    );
    expect(refused.status).toBe(400);
    expect(await balanceOf(payer().address)).toBe(before - 100_000n);
  });

  it('a payment header that is not a payment is a 400; a payment for another amount is asked for again (402); nothing moves', async () => {
    const before = await balanceOf(payer().address);
    for (const bad of ['not base64 at all!', Buffer.from('{"x402Version":1}').toString('base64'), Buffer.from('[1,2]').toString('base64'), '']) {
      const r = await call(fetch, { agent: 'fixtures/usd', input: {} }, { 'payment-signature': bad });
      expect(r.status).toBe(400);
    }
    // A payment signed for the quote agent's requirements does not answer the usd agent's.
    const asked = await call(fetch, { agent: 'fixtures/quote', input: { quote: '0.10' } });
    const other = await payerClient('upto').createPaymentPayload(decodePaymentRequiredHeader(asked.headers.get('payment-required')!));
    const r = await call(fetch, { agent: 'fixtures/usd', input: {} }, { 'payment-signature': encodePaymentSignatureHeader(other) });
    expect(r.status).toBe(402);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('payment_invalid');
    expect(await balanceOf(payer().address)).toBe(before);
  });

  it('an agent that passes its downstream costs on cannot be paid per call (422), and a callback needs an account (400)', async () => {
    const r = await call(fetch, { agent: 'fixtures/looper', input: {} });
    expect(r.status).toBe(422);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('payment_unsupported');
    const cb = await call(fetch, { agent: 'fixtures/usd', input: {}, callback_url: 'https://example.com/hook' });
    expect(cb.status).toBe(400);
  });

  it('property: over random paid calls, what the chain collected equals what the journal credited, and the audit is clean', async () => {
    const credited = async () =>
      -BigInt(
        ((await g.db.knex('account_balances').where({ account: EXTERNAL(), currency: 'USD' }).first('balance')) as { balance: string } | undefined)?.balance ??
          0,
      );
    const start = { chain: await balanceOf(treasury), journal: await credited() };
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            scheme: fc.constantFrom('exact' as const, 'upto' as const),
            agent: fc.constantFrom('usd', 'success-only-ok', 'success-only-fail', 'quote'),
            quote: fc.integer({ min: 0, max: 800 }),
            failSettle: fc.boolean(),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        async (calls) => {
          for (const c of calls) {
            const body =
              c.agent === 'usd'
                ? { agent: 'fixtures/usd', input: {} }
                : c.agent === 'quote'
                  ? { agent: 'fixtures/quote', input: { quote: (c.quote / 1000).toFixed(3) } }
                  : { agent: 'fixtures/success-only', input: { fail: c.agent === 'success-only-fail' } };
            const scheme = c.agent === 'quote' ? 'upto' : c.scheme;
            if (c.failSettle && scheme === 'upto') upto.beforeNextSettle = () => setAllowance(0n);
            const r = await call(payingFetch(scheme), body);
            expect([200, 502]).toContain(r.status);
            upto.beforeNextSettle = undefined;
            await setAllowance(10n ** 30n);
          }
          expect((await balanceOf(treasury)) - start.chain).toBe((await credited()) - start.journal);
        },
      ),
      { numRuns: 8 },
    );
    const report = await audit(g.db.knex);
    expect(report.problems).toEqual([]);
  });
});

describe('paying per call with MPP (mppx’s own client)', () => {
  /** A payer's mppx client: the native EVM charge method, this token's EIP-712 domain, no polyfill of fetch. */
  const mppClient = () =>
    Mppx.create({
      methods: [evm.charge({ account: payer(), authorization: { name: 'Test USD', version: '2' }, maxAtomicAmount: '2000000' })],
      polyfill: false,
    });

  it('the 402 carries a Payment challenge; mppx pays it; the answer carries Payment-Receipt with the transaction', async () => {
    const asked = await call(fetch, { agent: 'fixtures/usd', input: {} });
    const challenge = Challenge.fromResponse(asked);
    expect(challenge).toMatchObject({ method: 'evm', intent: 'charge', request: { amount: '100000', recipient: treasury } });
    const before = { payer: await balanceOf(payer().address), treasury: await balanceOf(treasury) };
    const r = await mppClient().fetch(`${g.url}/v0/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'fixtures/usd', input: {} }),
    });
    expect(r.status).toBe(200);
    const receipt = Receipt.fromResponse(r);
    expect(receipt).toMatchObject({ method: 'evm', status: 'success' });
    expect((await chain.publicClient.getTransactionReceipt({ hash: receipt.reference as Hex })).status).toBe('success');
    expect(await balanceOf(payer().address)).toBe(before.payer - 100_000n);
    expect(await balanceOf(treasury)).toBe(before.treasury + 100_000n);
    const body = (await r.json()) as { receipt: { payment: { scheme: string; transaction: string } } };
    expect(body.receipt.payment).toMatchObject({ scheme: 'exact', transaction: receipt.reference });
  });

  it('a credential sent again is refused (409); a malformed one is a 400; a forged challenge is asked again (402)', async () => {
    const asked = await call(fetch, { agent: 'fixtures/usd', input: {} });
    const credential = await mppClient().createCredential(asked);
    const auth = { authorization: credential };
    expect((await call(fetch, { agent: 'fixtures/usd', input: {} }, auth)).status).toBe(200);
    const before = await balanceOf(payer().address);
    const again = await call(fetch, { agent: 'fixtures/usd', input: {} }, auth);
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('payment_replayed');
    expect((await call(fetch, { agent: 'fixtures/usd', input: {} }, { authorization: 'Payment not-a-credential' })).status).toBe(400);
    const forged = Challenge.serialize(
      Challenge.from({ secretKey: 'not the gateway’s', realm: new URL(g.url).host, method: 'evm', intent: 'charge', request: { amount: '1' } }),
    );
    const fake = Credential.serialize(Credential.from({ challenge: Challenge.deserialize(forged), payload: { type: 'authorization' } }));
    expect((await call(fetch, { agent: 'fixtures/usd', input: {} }, { authorization: fake })).status).toBe(402);
    expect(await balanceOf(payer().address)).toBe(before);
  });

  it('a call without a fixed price offers no MPP challenge (upto only)', async () => {
    const asked = await call(fetch, { agent: 'fixtures/quote', input: { quote: '0.10' } });
    expect(asked.status).toBe(402);
    expect(asked.headers.get('www-authenticate')).toBeNull();
  });
});

describe('paying per call over MCP (the x402 MCP binding, with the MCP SDK’s client)', () => {
  /** A keyless MCP session on a hosted gateway with payments on: no key at all. */
  async function keylessSession(base: string): Promise<Client> {
    const client = new Client({ name: 'x402-payer', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    return client;
  }

  it('call_agent answers PaymentRequired as a tool error, and the retry with _meta["x402/payment"] is paid once, on chain', async () => {
    const hosted = await startTestGateway({
      hosted: true,
      config: x402Config(chain, token.address, { keylessPerMin: 100 }),
    });
    const client = await keylessSession(hosted.url);
    try {
      const args = { agent: 'fixtures/usd', input: {} };
      const asked = (await client.callTool({ name: 'call_agent', arguments: args })) as unknown as {
        isError?: boolean;
        structuredContent: PaymentRequired & { extensions: Record<string, unknown> };
      };
      expect(asked.isError).toBe(true);
      expect(asked.structuredContent.x402Version).toBe(2);
      // @x402/evm's own upto (Permit2) is offered beside exact on this gateway, which registers no test scheme.
      expect(asked.structuredContent.accepts.map((a) => [a.scheme, a.amount, a.payTo, a.asset])).toEqual([
        ['exact', '100000', treasury, token.address],
        ['upto', '100000', treasury, token.address],
      ]);
      expect(String((asked.structuredContent.extensions.mpp as Record<string, string>)['www-authenticate'])).toMatch(/^Payment id=/);
      expect(asked.structuredContent.accepts.every((a) => a.network === chain.network)).toBe(true);
      const payload = await payerClient('exact').createPaymentPayload(asked.structuredContent);
      const before = await balanceOf(payer().address);
      const treasuryBefore = await balanceOf(treasury);
      const paid = (await client.callTool({ name: 'call_agent', arguments: args, _meta: { 'x402/payment': payload } })) as unknown as {
        isError?: boolean;
        structuredContent: { status: string; receipt: { payment: { transaction: string } } };
        _meta: Record<string, { success: boolean; transaction: Hex }>;
      };
      expect(paid.isError).toBeFalsy();
      expect(paid.structuredContent.status).toBe('succeeded');
      const response = paid._meta['x402/payment-response']!;
      expect(response.success).toBe(true);
      expect((await chain.publicClient.getTransactionReceipt({ hash: response.transaction })).status).toBe('success');
      expect(paid.structuredContent.receipt.payment.transaction).toBe(response.transaction);
      expect(await balanceOf(payer().address)).toBe(before - 100_000n);
      expect(await balanceOf(treasury)).toBe(treasuryBefore + 100_000n);
      // The same payment again: a tool error, not a JSON-RPC error, and nothing moves.
      const again = (await client.callTool({ name: 'call_agent', arguments: args, _meta: { 'x402/payment': payload } })) as unknown as {
        isError?: boolean;
        structuredContent: { error: { code: string } };
      };
      expect(again).toMatchObject({ isError: true, structuredContent: { error: { code: 'payment_replayed' } } });
      expect(await balanceOf(payer().address)).toBe(before - 100_000n);
      // A new payment naming the same payment-identifier twice: the second is the first call's answer, unpaid.
      const identified = async () => {
        const p = await payerClient('exact').createPaymentPayload(asked.structuredContent);
        const extensions = appendPaymentIdentifierToExtensions(structuredClone(asked.structuredContent.extensions), `mcp_${'0f1e2d3c'.repeat(3)}`);
        return client.callTool({ name: 'call_agent', arguments: args, _meta: { 'x402/payment': { ...p, extensions } } }) as unknown as Promise<{
          structuredContent: { status: string; replayed?: boolean; receipt: { id: string } };
          _meta?: Record<string, { success: boolean }>;
        }>;
      };
      const once = await identified();
      expect(once.structuredContent.status).toBe('succeeded');
      const twice = await identified();
      expect(twice.structuredContent).toMatchObject({ status: 'succeeded', replayed: true, receipt: { id: once.structuredContent.receipt.id } });
      expect(twice._meta?.['x402/payment-response']?.success).toBe(true);
      expect(await balanceOf(payer().address)).toBe(before - 200_000n);
      // What needs an account is refused in words.
      const budget = (await client.callTool({ name: 'get_budget', arguments: {} })) as unknown as {
        isError?: boolean;
        structuredContent: { error: { code: string } };
      };
      expect(budget).toMatchObject({ isError: true, structuredContent: { error: { code: 'unauthorized' } } });
    } finally {
      await client.close();
      await hosted.stop();
    }
  });

  it('a 2026-07-28 client (the SDK v2, no session) pays per call the same way; what needs a key is refused from the headers', async () => {
    const hosted = await startTestGateway({ hosted: true, config: x402Config(chain, token.address, { keylessPerMin: 100 }) });
    const client = new ModernClient({ name: 'x402-payer-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    try {
      await client.connect(new ModernTransport(new URL(`${hosted.url}/mcp`)));
      const args = { agent: 'fixtures/usd', input: {} };
      const asked = (await client.callTool({ name: 'call_agent', arguments: args })) as unknown as { isError?: boolean; structuredContent: PaymentRequired };
      expect(asked.isError).toBe(true);
      expect(asked.structuredContent.accepts.map((a) => a.scheme)).toEqual(['exact', 'upto']);
      const payload = await payerClient('exact').createPaymentPayload(asked.structuredContent);
      const before = await balanceOf(payer().address);
      const paid = (await client.callTool({ name: 'call_agent', arguments: args, _meta: { 'x402/payment': payload } })) as unknown as {
        structuredContent: { status: string; receipt: { billed: boolean; payment: { transaction: string } } };
        _meta: Record<string, { success: boolean; transaction: Hex }>;
      };
      expect(paid.structuredContent).toMatchObject({ status: 'succeeded', receipt: { billed: true } });
      expect(paid._meta['x402/payment-response']!.transaction).toBe(paid.structuredContent.receipt.payment.transaction);
      expect(await balanceOf(payer().address)).toBe(before - 100_000n);
      await expect(client.callTool({ name: 'get_budget', arguments: {} })).rejects.toThrow(/401|agent key/);
    } finally {
      await client.close();
      await hosted.stop();
    }
  });

  it('without payments on, a keyless MCP session is refused as before', async () => {
    const plain = await startTestGateway({ hosted: true });
    try {
      await expect(keylessSession(plain.url)).rejects.toThrow(/401|agent key/);
    } finally {
      await plain.stop();
    }
  });
});

describe('paying per call over A2A (the a2a-x402 extension, with the A2A SDK’s client)', () => {
  it('a keyless message is asked for payment on its task; the payment on that task runs the call, paid once, on chain', async () => {
    const hosted = await startTestGateway({ hosted: true, config: x402Config(chain, token.address, { keylessPerMin: 100 }) });
    try {
      const cardUrl = `${hosted.url}/a2a/fixtures/usd/.well-known/agent-card.json`;
      const card = (await (await fetch(cardUrl)).json()) as { capabilities: { extensions: Array<{ uri: string }> } };
      expect(card.capabilities.extensions.map((e) => e.uri)).toContain('https://github.com/google-agentic-commerce/a2a-x402/blob/main/spec/v0.2');
      const client = await a2aClient(cardUrl);
      const asked = (await client.sendMessage({ message: dataMessage({}) } as never)) as any;
      expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const meta = asked.status.message.metadata;
      expect(meta['x402.payment.status']).toBe('payment-required');
      const required = meta['x402.payment.required'] as PaymentRequired;
      expect(required.accepts.map((a) => [a.scheme, a.amount, a.payTo, a.network])).toContainEqual(['exact', '100000', treasury, chain.network]);
      expect(meta['holon/quote']).toMatchObject({ agent: 'fixtures/usd@1.0.0', pay: { units: '100000' } });
      const payload = await payerClient('exact').createPaymentPayload(required);
      const before = { payer: await balanceOf(payer().address), treasury: await balanceOf(treasury) };
      const pay = (taskId: string, p: unknown) =>
        client.sendMessage({
          message: dataMessage({}, { taskId, metadata: { 'x402.payment.status': 'payment-submitted', 'x402.payment.payload': p } }),
        } as never) as Promise<any>;
      const done = await pay(asked.id, payload);
      expect(done.id).toBe(asked.id);
      expect(done.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const doneMeta = done.status.message.metadata;
      expect(doneMeta['x402.payment.status']).toBe('payment-completed');
      const settled = doneMeta['x402.payment.receipts'][0] as { success: boolean; transaction: Hex };
      expect(settled.success).toBe(true);
      expect((await chain.publicClient.getTransactionReceipt({ hash: settled.transaction })).status).toBe('success');
      expect(done.metadata['holon/receipt']).toMatchObject({
        billed: true,
        payer: `external:x402:${chain.network}`,
        payment: { transaction: settled.transaction },
      });
      expect(await balanceOf(payer().address)).toBe(before.payer - 100_000n);
      expect(await balanceOf(treasury)).toBe(before.treasury + 100_000n);
      // The task paid once: paying on it again finds no payment asked; the same payment on a new task is refused.
      await expect(pay(asked.id, payload)).rejects.toThrow(/no payment is asked/);
      const again = (await client.sendMessage({ message: dataMessage({}) } as never)) as any;
      await expect(pay(again.id, payload)).rejects.toThrow(/used already/);
      // The task still asks; declined: rejected, nothing ran. A keyless caller reads no task.
      const rejected = (await client.sendMessage({
        message: dataMessage({}, { taskId: again.id, metadata: { 'x402.payment.status': 'payment-rejected' } }),
      } as never)) as any;
      expect(rejected.status.state).toBe(TaskState.TASK_STATE_REJECTED);
      await expect(client.getTask({ id: asked.id } as never)).rejects.toThrow();
      expect(await balanceOf(payer().address)).toBe(before.payer - 100_000n);
      expect((await audit(hosted.db.knex)).problems).toEqual([]);
    } finally {
      await hosted.stop();
    }
  });
});

describe('keyless limits', () => {
  it('a client address gets HOLON_X402_RATE_PER_MIN paid-call requests a minute, then 429 with Retry-After', async () => {
    const limited = await startTestGateway({
      config: x402Config(chain, token.address, { keylessPerMin: 2 }),
    });
    try {
      const ask = () =>
        fetch(`${limited.url}/v0/calls`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ agent: 'fixtures/usd', input: {} }),
        });
      const first = await ask();
      expect(first.status, await first.text()).toBe(402);
      expect((await ask()).status).toBe(402);
      const third = await ask();
      expect(third.status).toBe(429);
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await limited.stop();
    }
  });
});
