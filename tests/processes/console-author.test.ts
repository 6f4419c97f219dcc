/**
 * The console for the people who publish and the one who operates, in a real browser against a hosted gateway on
 * real Postgres with the fake GitHub: an author signs in with GitHub, connects a webhook (draft from one real call,
 * the manifest as editable YAML, a refusal shown where it belongs, then published), sets its endpoint credential
 * (write-only), watches its evaluation pass and its earnings arrive from another account's paid call, and yanks it
 * after a confirmation; the operator signs in with the admin key, gives demo credit and disables an account, which
 * the moderation log then shows. And on a dev gateway, the newcomer's first journey: "Try an agent". Every page is
 * checked by axe-core; any console error, uncaught exception, 5xx or request to another origin fails the test.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { parse, stringify } from 'yaml';
import { launchBrowser } from '../support/browser.js';
import { openConsolePage, settled, type ConsolePage } from '../support/console-browser.js';
import { startFakeGitHub } from '../support/fake-github.js';
import { ADMIN_KEY, send, signUp } from '../support/hosted.js';
import { freePort } from '../support/processes.js';
import { startTestGateway, useAudited } from '../support/gateway.js';
import type { Answer } from '../support/http.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

async function accessible(cp: ConsolePage, label: string, audit: Record<string, string[]>) {
  const { violations, serious } = await cp.axe();
  audit[label] = violations.map((v) => `${v.id} (${v.impact})`);
  expect(serious, `${label}: ${JSON.stringify(serious)}`).toEqual([]);
}

/** A webhook agent on loopback that upper-cases `text` (what the text.transform suite asks of it). */
async function shoutingWebhook(): Promise<{ url: string; tokens: string[]; close(): Promise<void> }> {
  const tokens: string[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      tokens.push(req.headers.authorization ?? '');
      let text = '';
      try {
        text = String(JSON.parse(raw)?.text ?? '');
      } catch {
        /* not JSON: answer with an empty text */
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ text: text.toUpperCase() }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/shout`,
    tokens,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const inForm = (page: Page, heading: string) => page.locator('form', { has: page.getByRole('heading', { name: heading }) });

test('an author connects a webhook, publishes it, sees it evaluated and paid, and yanks it; the operator moderates', async () => {
  const github = await startFakeGitHub();
  const hook = await shoutingWebhook();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const audit: Record<string, string[]> = {};
  try {
    await useAudited(
      await startTestGateway({
        hosted: true,
        config: {
          ...github.config,
          port,
          publicUrl: url,
          allowPrivateEndpoints: true,
          fileSecret: 'file-secret-for-the-console-test-0123456789abcdef',
        },
      }),
      async () => {
        github.addUser({ id: 777, login: 'lena' });
        github.signIn('lena');
        const cp = await openConsolePage(browser, url);
        const { page } = cp;
        await cp.open('');
        await page.click('#sign-in');
        await page.waitForSelector('#continue', { timeout: 10_000 });
        const lenaKey = (await page.textContent('#human-key'))!.trim();
        await page.click('#continue');
        await page.waitForSelector('#balances');

        // Connect a webhook: one real call drafts the listing.
        await cp.open('publish');
        const draft = inForm(page, '1. Describe your webhook');
        await draft.getByLabel('Agent name').fill('shout');
        await draft.getByLabel('Endpoint').fill(hook.url);
        await draft.getByLabel('Example input (JSON)').fill('{"text": "hello"}');
        await draft.getByLabel('Price (EUR per run)').fill('0.02');
        await draft.getByLabel('Summary').fill('Shouts the text back');
        await page.click('#draft');
        const editor = page.getByLabel('Manifest (YAML)');
        await expect.poll(() => editor.inputValue(), { timeout: 15_000 }).toContain('lena/shout');
        await accessible(cp, 'publish: the draft', audit);

        // A refused listing: the problem is named under the editor, the editor marked.
        const manifest = parse(await editor.inputValue());
        await editor.fill(stringify({ ...manifest, version: '1.0' }));
        await page.click('#publish');
        await expect.poll(() => editor.getAttribute('aria-invalid'), { timeout: 15_000 }).toBe('true');
        expect(await page.getByRole('list', { name: 'Why the listing was refused' }).textContent()).toContain('$.version');
        expect((await send(url, 'GET', '/v0/me/agents', { key: lenaKey })).body.versions).toEqual([]);

        // Published with the capability whose suite evaluates it.
        await editor.fill(stringify({ ...manifest, version: '1.0.0', capabilities: ['text.transform'] }));
        await page.click('#publish');
        await expect
          .poll(() => page.locator('.notice.ok').allTextContents(), { timeout: 15_000 })
          .toContainEqual(expect.stringContaining('Listed: lena/shout@1.0.0'));
        expect((await send(url, 'GET', '/v0/agents/lena/shout', { key: lenaKey })).status).toBe(200);

        // The endpoint credential: written, never shown back; the page says only that one is set.
        const credential = page.locator('section[aria-label="Endpoint credential"]');
        await credential.getByLabel('Agent name').fill('shout');
        await credential.getByLabel('Token').fill('tok-lena-0123456789');
        await page.click('#credential-set');
        await expect.poll(() => page.textContent('#credential-state'), { timeout: 10_000 }).toMatch(/a token is set/);
        expect(await page.content()).not.toContain('tok-lena-0123456789');
        expect((await send(url, 'GET', '/v0/agents/lena/shout/credential', { key: lenaKey })).body).toMatchObject({ set: true });

        // Another account pays for a run: the author's share appears, exactly.
        const alice = await signUp(url, 'alice');
        const m = await send(url, 'POST', '/v0/mandates', {
          key: alice.human,
          body: { id: 'shouting', grantee: 'alice/assistant', allow: { agents: ['lena/*'] }, budget: { total: '1.00' } },
        });
        expect(m.status).toBe(201);
        const paid = await send(url, 'POST', '/v0/calls', {
          key: alice.human,
          body: { mandate: 'alice/shouting', agent: 'lena/shout', input: { text: 'hey' } },
        });
        expect(paid.status, JSON.stringify(paid.body)).toBe(200);
        expect(hook.tokens.at(-1)).toBe('Bearer tok-lena-0123456789');
        const share = paid.body.receipt.splits.find((s: { to: string }) => s.to === 'lena').amount as string;
        expect(share).toBe('0.018');

        // The evaluation passes and the earnings show, without leaving the page.
        await cp.open('publish');
        await expect.poll(async () => (await page.textContent('#my-agents')) ?? '', { timeout: 30_000, interval: 1000 }).toMatch(/passed/i);
        expect(await page.textContent('#earned-total')).toContain(`${share} EUR`);
        // Payouts: the address is set from the page and shown masked; this gateway takes no payments, so a withdrawal says so.
        const payouts = page.locator('#payouts');
        await expect.poll(() => payouts.textContent(), { timeout: 10_000 }).toContain('Set an address');
        await payouts.getByLabel('Payout address').fill('0x70997970c51812dc3a010c7d01b50e0d17dc79c8');
        await payouts.getByRole('button', { name: 'Set the address' }).click();
        await expect.poll(() => payouts.textContent(), { timeout: 10_000 }).toContain('Payouts go to 0x7099…79C8');
        expect(await payouts.textContent()).toContain('This gateway takes no payments from outside');
        expect(await payouts.getByRole('button', { name: /Withdraw/ }).count()).toBe(0);
        await accessible(cp, 'publish: my agents', audit);

        // Yank, after a confirmation that can be cancelled.
        await page.getByRole('button', { name: 'Yank 1.0.0' }).click();
        await page.getByRole('button', { name: 'Cancel' }).click();
        expect((await send(url, 'GET', '/v0/me/agents', { key: lenaKey })).body.versions[0].listed).toBe(true);
        await page.getByRole('button', { name: 'Yank 1.0.0' }).click();
        await page.getByRole('button', { name: 'Yes, yank 1.0.0' }).click();
        await expect.poll(() => page.locator('[data-outcome="lena/shout@1.0.0"]').textContent(), { timeout: 10_000 }).toContain('Yanked');
        expect((await send(url, 'GET', '/v0/me/agents', { key: lenaKey })).body.versions[0].listed).toBe(false);
        expect(cp.problems, JSON.stringify(cp.problems)).toEqual([]);
        await cp.close();

        // The operator: the admin key pasted at sign-in opens the operator page.
        const op = await openConsolePage(browser, url);
        await op.open('');
        await op.page.getByLabel('Your key').fill(ADMIN_KEY);
        await op.page.getByRole('button', { name: 'Sign in with this key' }).click();
        await op.page.waitForSelector('#operator-accounts');
        await settled(op.page);
        await accessible(op, 'operator', audit);
        const credit = op.page.locator('section[aria-label="Demo credit"]');
        await credit.getByLabel('Account').fill('lena');
        await credit.getByLabel('Amount (EUR)').fill('1.25');
        await credit.getByRole('button', { name: 'Give the credit' }).click();
        await expect.poll(async () => (await send(url, 'GET', '/v0/accounts', { key: lenaKey })).body.accounts[0].balance, { timeout: 10_000 }).toBe('6.268');
        await op.page.getByRole('searchbox', { name: 'Find accounts' }).fill('alice');
        await op.page.getByRole('button', { name: 'Search' }).click();
        await op.page.locator('summary', { hasText: 'Disable alice' }).click();
        await op.page.getByLabel('Why disable alice').fill('test: spam through the sandbox');
        await op.page.getByRole('button', { name: 'Disable alice' }).click();
        await expect.poll(() => op.page.textContent('#operator-accounts'), { timeout: 10_000 }).toContain('Disabled alice');
        expect((await send(url, 'GET', '/v0/me', { key: alice.human })).status).toBe(401);
        await op.open('operator');
        await expect.poll(() => op.page.textContent('#operator-log'), { timeout: 10_000 }).toContain('test: spam through the sandbox');
        expect(op.problems).toEqual([]);
        await op.close();
        console.log(`axe-core, violations per page (none serious or critical): ${JSON.stringify(audit)}`);
      },
    );
  } finally {
    await hook.close();
    await github.close();
  }
}, 150_000);

test('on a dev gateway a newcomer tries an agent first: picks it, runs its example, reads the output and the receipt', async () => {
  const audit: Record<string, string[]> = {};
  await useAudited(await startTestGateway(), async (g) => {
    await g.mandate({});
    const cp = await openConsolePage(browser, g.url);
    const { page } = cp;
    await cp.open('');
    expect(new URL(page.url()).hash).toBe('#/try');
    expect(await page.textContent('h1')).toBe('Try an agent');
    await accessible(cp, 'try: the catalogue', audit);
    await page.getByLabel('Search agents').fill('upper');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('#try-results a', { hasText: 'examples/echo-upper' }).first().click();
    await page.waitForSelector('#try-run');
    await settled(page);
    expect(JSON.parse(await page.getByLabel('Input (JSON)').inputValue())).toBeTypeOf('object');
    await page.getByLabel('Call under the mandate').selectOption('alice/test');
    await page.getByLabel('Input (JSON)').fill('{"text": "hello <b>there</b>"}');
    await page.click('#try-run');
    await expect.poll(() => page.textContent('#try-outcome'), { timeout: 15_000 }).toContain('HELLO <B>THERE</B>');
    expect(await page.locator('#try-outcome b').count()).toBe(0);
    expect(await page.textContent('#try-outcome')).toContain('0.01 EUR');
    await accessible(cp, 'try: a run', audit);
    // Bad JSON is refused at the field and nothing is sent.
    await page.getByLabel('Input (JSON)').fill('{"text": ');
    await page.click('#try-run');
    await expect.poll(() => page.getByLabel('Input (JSON)').getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
    const receipts = (await g.get<Answer<'listReceipts', 200>>('/v0/receipts?mandate=alice/test')).body.receipts;
    expect(receipts).toHaveLength(1);
    await page.locator('#try-outcome a[href^="#/receipts/"]').first().click();
    await page.waitForSelector(`[data-receipt="${receipts[0]!.id}"]`);

    // A streamed output: each chunk shows as it arrives, then the outcome.
    await cp.open('try/fixtures/streamer');
    await page.waitForSelector('#try-run');
    await settled(page);
    await page.getByLabel('Call under the mandate').selectOption('alice/test');
    await page.getByLabel('Input (JSON)').fill('{"n": 5, "gap_ms": 300}');
    await page.click('#try-run');
    await expect.poll(() => page.locator('#try-live ol.chunks li').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    // Chunks were on the page before the run ended: the outcome (its receipt link) is not there yet.
    expect(await page.locator('#try-outcome a[href^="#/receipts/"]').count()).toBe(0);
    await expect.poll(() => page.textContent('#try-outcome'), { timeout: 15_000 }).toContain('0.05 EUR');
    expect(await page.locator('#try-live ol.chunks li').allTextContents()).toEqual([0, 1, 2, 3, 4].map((i) => JSON.stringify({ text: `part ${i}` })));

    // An agent that asks: its question with a form; a wrong answer is refused in words at the field, the right one
    // goes to the agent, and the outcome follows.
    await cp.open('try/fixtures/asker');
    await page.waitForSelector('#try-run');
    await settled(page);
    await page.getByLabel('Call under the mandate').selectOption('alice/test');
    await page.getByLabel('Input (JSON)').fill('{}');
    await page.click('#try-run');
    await page.waitForSelector('#try-answer');
    expect(await page.textContent('#try-live .question')).toBe('What is name 1?');
    await accessible(cp, 'try: a question', audit);
    await page.getByLabel('Your answer (JSON)').fill('{"name": 5}');
    await page.click('#try-answer');
    await expect.poll(() => page.getByLabel('Your answer (JSON)').getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
    await page.getByLabel('Your answer (JSON)').fill('{"name": "Console"}');
    await page.click('#try-answer');
    await expect.poll(() => page.textContent('#try-outcome'), { timeout: 15_000 }).toContain('hello Console');
    expect(cp.problems).toEqual([]);
    await cp.close();
    console.log(`axe-core, violations per page (none serious or critical): ${JSON.stringify(audit)}`);
  });
});
