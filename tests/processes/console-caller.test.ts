/**
 * The console for the people who pay and approve, in a real browser (headless Chromium) against a hosted gateway on
 * real Postgres with the fake GitHub: sign in with GitHub (the keys shown once, the code out of the address bar, the
 * key in sessionStorage only), create a mandate through a form that shows the API's problems at their fields, mint a
 * key (shown once, with the `claude mcp add` line), approve one held call and reject another as they arrive over
 * the API (no reload), open a receipt tree child by child, read the month's reconciliation and check it against the
 * API's own figures to the micro-unit, download the month as CSV, sign out, and come back with a pasted key that the
 * operator then revokes. Every page is checked by axe-core; any console error, uncaught exception, 5xx or request to
 * another origin fails the test (tests/support/console-browser.ts).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { CONSOLE_CSP } from '../../services/api/routes/console.js';
import { launchBrowser } from '../support/browser.js';
import { openConsolePage, settled, type ConsolePage } from '../support/console-browser.js';
import { startFakeGitHub } from '../support/fake-github.js';
import { ADMIN_KEY, send } from '../support/hosted.js';
import { freePort } from '../support/processes.js';
import { startTestGateway, useAudited } from '../support/gateway.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const micros = (amount: string) => {
  const [whole, frac = ''] = amount.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'));
};
const format = (m: bigint) => {
  const frac = (m % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '').padEnd(2, '0');
  return `${m / 1_000_000n}.${frac}`;
};

/** Every serious or critical axe-core violation on the page as it is now, by rule. */
async function accessible(cp: ConsolePage, label: string, audit: Record<string, string[]>) {
  const { violations, serious } = await cp.axe();
  audit[label] = violations.map((v) => `${v.id} (${v.impact})`);
  expect(serious, `${label}: ${JSON.stringify(serious)}`).toEqual([]);
}

const fieldError = (page: Page, label: string) => page.locator('.field', { has: page.getByLabel(label, { exact: true }) }).locator('.field-error');

test('a payer signs in, budgets, mints a key, approves and rejects held calls, and reconciles the month', async () => {
  const github = await startFakeGitHub();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const audit: Record<string, string[]> = {};
  try {
    await useAudited(await startTestGateway({ hosted: true, config: { ...github.config, port, publicUrl: url } }), async () => {
      github.addUser({ id: 4242, login: 'Bob-Builder' });
      github.signIn('Bob-Builder');
      const cp = await openConsolePage(browser, url);
      const { page } = cp;

      // The page and its guards: its own CSP, no framing, no referrer.
      const first = await page.goto(`${url}/console`);
      expect(first?.status()).toBe(200);
      expect(first?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
      expect(first?.headers()['x-frame-options']).toBe('DENY');
      expect(first?.headers()['referrer-policy']).toBe('no-referrer');
      await settled(page);
      await accessible(cp, 'sign-in', audit);

      // Sign in with GitHub: the keys once, the code gone from the address bar, the human key kept for this tab only.
      await page.click('#sign-in');
      await page.waitForSelector('#signed-in', { timeout: 10_000 });
      expect(await page.textContent('#handle')).toBe('bob-builder');
      const human = (await page.textContent('#human-key'))!.trim();
      expect(human).toMatch(/^hlk_h_/);
      const starterAgent = (await page.textContent('#agent-key'))!.trim();
      expect(starterAgent).toMatch(/^hlk_a_/);
      expect(new URL(page.url()).hash).toBe('');
      await accessible(cp, 'keys shown once', audit);
      await page.click('#continue');
      await page.waitForSelector('#balances');
      await settled(page);
      expect(
        await page.evaluate(() => ({ local: localStorage.length, cookie: document.cookie, session: sessionStorage.getItem('holon.console.key') })),
      ).toEqual({
        local: 0,
        cookie: '',
        session: human,
      });
      expect(page.url()).not.toContain(human.slice(6));
      expect(await page.textContent('#balances')).toContain('5.00 EUR');
      await accessible(cp, 'home', audit);

      // A mandate: every problem the API reports at its own field, then the mandate itself.
      await cp.open('mandates');
      await page.getByLabel('Name', { exact: true }).fill('research');
      await page.getByLabel('Grantee (the agent that acts under it)').fill('somebody-else/assistant');
      await page.getByLabel('Agents it may call').fill('examples/*');
      await page.getByLabel('Total budget (EUR)').fill('lots');
      await page.getByRole('button', { name: 'Create the mandate' }).click();
      await expect
        .poll(() => fieldError(page, 'Grantee (the agent that acts under it)').textContent(), { timeout: 10_000 })
        .toContain('must be one of your agents');
      expect(await fieldError(page, 'Total budget (EUR)').textContent()).not.toBe('');
      expect(await page.getByLabel('Total budget (EUR)').getAttribute('aria-invalid')).toBe('true');
      await accessible(cp, 'mandate form with problems', audit);
      await page.getByLabel('Grantee (the agent that acts under it)').fill('bob-builder/assistant');
      await page.getByLabel('Total budget (EUR)').fill('2.00');
      await page.getByLabel('Ask me to approve calls whose worst case is above (EUR)').fill('0.001');
      await page.getByRole('button', { name: 'Create the mandate' }).click();
      await page.waitForSelector('#mandate-list h3:text("bob-builder/research")', { timeout: 10_000 });
      const stored = await send(url, 'GET', '/v0/mandates/bob-builder/research', { key: human });
      expect(stored.body.mandate).toMatchObject({ grantee: 'bob-builder/assistant', approval: { above: '0.001' }, budget: { total: '2.00', currency: 'EUR' } });

      // An agent key for it: shown once with the line Claude Code takes; listed as not ask_in_client.
      await settled(page);
      await page.getByLabel('Mandate', { exact: true }).selectOption('bob-builder/research');
      await page.getByRole('button', { name: 'Mint the key' }).click();
      await page.waitForSelector('#new-key');
      const agentKey = (await page.textContent('#new-key'))!.trim();
      expect(await page.textContent('#mcp-line')).toBe(`claude mcp add --transport http holon ${url}/mcp --header "Authorization: Bearer ${agentKey}"`);
      await accessible(cp, 'mandates and keys', audit);
      await page.getByRole('button', { name: 'Done: I kept it' }).click();
      await settled(page);
      const keyRow = page.locator('tr', { hasText: agentKey.slice(0, 14) });
      expect(await keyRow.textContent()).toContain('bob-builder/research');
      expect(await keyRow.locator('td').nth(2).textContent()).toBe('no');
      // The starter key of the sandbox (ask_in_client) is revoked from its row.
      const starter = page.locator('tr', { hasText: 'bob-builder/sandbox' });
      expect(await starter.locator('td').nth(2).textContent()).toBe('yes');
      await starter.getByRole('button', { name: /^Revoke the key/ }).click();
      await expect.poll(() => page.locator('tr', { hasText: 'bob-builder/sandbox' }).locator('td').nth(3).textContent(), { timeout: 10_000 }).toBe('revoked');
      expect((await send(url, 'GET', '/v0/me', { key: starterAgent })).status).toBe(401);

      // Held calls arrive over the API while the approvals page is open; one is approved and run, one rejected.
      await cp.open('approvals');
      expect(await page.isVisible('#no-approvals')).toBe(true);
      const hostile = '<img src=x onerror=window.__pwned=1><b>bold</b>';
      const held: string[] = [];
      const long = `${'a long invoice line\n'.repeat(60)}the end`;
      for (const text of [hostile, long]) {
        const r = await send(url, 'POST', '/v0/calls', {
          key: agentKey,
          body: { mandate: 'bob-builder/research', agent: 'examples/echo-upper', input: { text } },
        });
        expect(r.status, JSON.stringify(r.body)).toBe(202);
        held.push(r.body.approval.id as string);
      }
      const card = (id: string) => page.locator(`[data-approval="${id}"]`);
      await card(held[1]!).waitFor({ timeout: 10_000 });
      await card(held[0]!).waitFor();
      expect(await card(held[0]!).locator('pre').first().textContent()).toContain(hostile);
      expect(await card(held[0]!).locator('img, b').count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      expect(await card(held[0]!).locator('.worst-case').textContent()).toBe('0.01 EUR');
      expect(await card(held[0]!).textContent()).toContain('examples/echo-upper@1.0.0');
      // A long input is folded: its head is shown, the whole behind a disclosure.
      expect(await card(held[0]!).locator('details').count()).toBe(0);
      expect(await card(held[1]!).locator('details pre').isVisible()).toBe(false);
      await card(held[1]!).locator('details summary').click();
      expect(await card(held[1]!).locator('details pre').textContent()).toContain('the end');
      await accessible(cp, 'approvals', audit);
      await card(held[0]!).getByRole('button', { name: 'Approve and run' }).click();
      await expect.poll(() => card(held[0]!).locator('.outcome').textContent(), { timeout: 15_000 }).toContain('succeeded');
      await card(held[1]!).getByRole('button', { name: 'Reject' }).click();
      await expect.poll(() => card(held[1]!).locator('.outcome').textContent(), { timeout: 10_000 }).toContain('Rejected');
      expect((await send(url, 'GET', `/v0/approvals/${held[1]}`, { key: human })).body.status).toBe('rejected');
      expect((await send(url, 'GET', `/v0/approvals`, { key: human })).body.approvals).toEqual([]);

      // More traffic over the API: a delegated run (a receipt tree) and an input the agent's schema refuses.
      const tree = await send(url, 'POST', '/v0/mandates', {
        key: human,
        body: {
          id: 'pipelines',
          grantee: 'bob-builder/assistant',
          allow: { agents: ['examples/*'], capabilities: ['text.*'] },
          budget: { total: '1.00' },
          delegation: { max_depth: 1 },
        },
      });
      expect(tree.status).toBe(201);
      const run = await send(url, 'POST', '/v0/calls', {
        key: human,
        body: { mandate: 'bob-builder/pipelines', agent: 'examples/invoice-pipeline', input: { text: 'Invoice 42: 3 widgets', to: 'fr' } },
      });
      expect(run.status, JSON.stringify(run.body)).toBe(200);
      const refused = await send(url, 'POST', '/v0/calls', {
        key: human,
        body: { mandate: 'bob-builder/pipelines', agent: 'examples/echo-upper', input: { words: 3 } },
      });
      expect(refused.body.receipt.status).toBe('rejected_input');

      // Calls, filtered by status; the tree opens child by child.
      await cp.open('calls?status=rejected_input');
      expect(await page.locator('tbody tr').count()).toBe(1);
      expect(await page.locator('tbody').textContent()).toContain('rejected input');
      await accessible(cp, 'calls', audit);
      await cp.open('calls?mandate=bob-builder/pipelines&status=succeeded');
      expect(await page.locator('tbody tr').count()).toBe(1);
      await page.locator('tbody a').first().click();
      await page.waitForSelector(`[data-receipt="${run.body.receipt.id}"]`);
      await settled(page);
      expect(await page.locator('.receipt').first().locator('.cost-total').textContent()).toBe('0.1061 EUR');
      const children = page.locator('details[data-child]');
      expect(await children.count()).toBe(2);
      expect(await children.first().locator('.cost-own').isVisible()).toBe(false);
      await children.first().locator('summary').click();
      expect(await children.first().locator('.cost-own').isVisible()).toBe(true);
      expect(await children.first().locator('.splits').textContent()).toContain('holon');
      await accessible(cp, 'receipt tree', audit);

      // The month: the page's figures are the API's, to the micro-unit.
      const month = new Date().toISOString().slice(0, 7);
      await cp.open(`month/${month}`);
      const receipts = (await send(url, 'GET', '/v0/receipts?limit=200', { key: human })).body.receipts as Array<{
        mandate: string;
        billed: boolean;
        cost: { total: string };
      }>;
      const mandates = (await send(url, 'GET', '/v0/mandates', { key: human })).body.mandates as Array<{ mandate: { id: string }; budget: { spent: string } }>;
      for (const m of mandates) {
        const billed = receipts.filter((r) => r.mandate === m.mandate.id && r.billed).reduce((s, r) => s + micros(r.cost.total), 0n);
        expect(billed).toBe(micros(m.budget.spent));
        const row = page.locator('section[aria-label="Per mandate"] tr', { hasText: m.mandate.id });
        expect(await row.locator('td').nth(2).textContent()).toBe(`${format(billed)} EUR`);
        expect(await row.locator('td').nth(4).textContent()).toBe(format(micros(m.budget.spent)));
        expect(await row.locator('.check-bad').count()).toBe(0);
      }
      const balance = (await send(url, 'GET', '/v0/accounts', { key: human })).body.accounts[0].balance as string;
      const against = page.locator('section[aria-label="Against the balance"] tbody tr');
      expect(await against.locator('td').nth(5).textContent()).toBe(balance);
      expect(await against.locator('.check-ok').count()).toBe(2);
      const totalBilled = receipts.filter((r) => r.billed).reduce((s, r) => s + micros(r.cost.total), 0n);
      expect(micros('5.00') - totalBilled).toBe(micros(balance));
      expect(await page.textContent('[data-count="rejected_input"]')).toBe('1');
      expect(await page.locator('section[aria-label="Paid for nothing"] .notice').textContent()).toContain('rejected_input');
      expect(await page.locator('.chart rect').count()).toBeGreaterThanOrEqual(28);
      await accessible(cp, 'month', audit);
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#csv')]);
      const csv = await (await download.createReadStream()).toArray();
      const text = Buffer.concat(csv).toString('utf8');
      expect(text.split('\n')[0]).toMatch(/^id,created_at,mandate,agent,status/);
      expect(text).toContain(run.body.receipt.id);
      // Any month: the one before has none of these calls, and its checks hold (spent may only have grown since).
      const before = new Date();
      before.setUTCDate(1);
      before.setUTCMonth(before.getUTCMonth() - 1);
      const previous = before.toISOString().slice(0, 7);
      await page.getByLabel('Month', { exact: true }).fill(previous);
      await page.getByRole('button', { name: 'Show' }).click();
      await page.waitForSelector(`h1:text("Month ${previous}")`);
      await settled(page);
      expect(await page.locator('.lead').textContent()).toContain('0 calls');
      const research = page.locator('section[aria-label="Per mandate"] tr', { hasText: 'bob-builder/research' });
      expect(await research.locator('td').nth(2).textContent()).toBe('0.00 EUR');
      expect(await page.locator('section[aria-label="Per mandate"] .check-bad').count()).toBe(0);

      // Signing out forgets the key; a pasted key signs back in; when the operator disables the account, the next
      // request returns the person to sign-in with a plain sentence.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForSelector('#signed-out');
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
      await page.getByLabel('Your key').fill(`hlk_a_${'x'.repeat(30)}`);
      await page.getByRole('button', { name: 'Sign in with this key' }).click();
      await expect.poll(() => fieldError(page, 'Your key').textContent(), { timeout: 10_000 }).toContain('agent key');
      await page.getByLabel('Your key').fill(human);
      await page.getByRole('button', { name: 'Sign in with this key' }).click();
      // Back where the person was when they signed out.
      await page.waitForSelector('section[aria-label="Per mandate"]');
      const disabled = await send(url, 'POST', '/v0/admin/accounts/bob-builder/disable', { key: ADMIN_KEY, body: { reason: 'test: keys revoked' } });
      expect(disabled.status).toBe(200);
      await cp.open('calls');
      await page.waitForSelector('#signed-out');
      expect(await page.textContent('#signed-out')).toContain('Your key has expired or was revoked');
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

      expect(cp.problems).toEqual([]);
      await cp.close();
      console.log(`axe-core, violations per page (none serious or critical): ${JSON.stringify(audit)}`);
    });
  } finally {
    await github.close();
  }
}, 120_000);
