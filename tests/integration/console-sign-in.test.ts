/**
 * Signing in with GitHub in a real browser (headless Chromium): the console page at /console starts the flow, the
 * fake GitHub approves, the callback sends the browser to /console#login=<code>, and the page trades the code for the
 * keys (services/api/console/console.js). The fragment leaves the address bar at once; the key works; a refusal is
 * shown in plain words; the page breaks no rule of its own Content-Security-Policy.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { CONSOLE_CSP } from '../../services/api/routes/console.js';
import { launchBrowser } from '../support/browser.js';
import { startFakeGitHub } from '../support/fake-github.js';
import { send, startHostedGateway } from '../support/hosted.js';
import { freePort } from '../support/processes.js';
import { useAudited } from '../support/gateway.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

test('the console signs a stranger in through GitHub, shows the keys once, and says why when GitHub refuses', async () => {
  const github = await startFakeGitHub();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  try {
    await useAudited(await startHostedGateway({ ...github.config, port, publicUrl: url }), async () => {
      github.addUser({ id: 4242, login: 'Bob-Builder' });
      github.signIn('Bob-Builder');
      const context = await browser.newContext();
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(e.message));

      const first = await page.goto(`${url}/console`);
      expect(first?.status()).toBe(200);
      expect(first?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
      expect(first?.headers()['x-frame-options']).toBe('DENY');
      await page.click('#sign-in');
      await page.waitForSelector('#signed-in:not([hidden])', { timeout: 10_000 });
      expect(await page.textContent('#handle')).toBe('bob-builder');
      const human = (await page.textContent('#human-key'))!.trim();
      const agent = (await page.textContent('#agent-key'))!.trim();
      expect(human.length).toBeGreaterThan(20);
      expect(agent.length).toBeGreaterThan(20);
      // The one-time code left the address bar: nothing to copy, bookmark or leak from it.
      expect(new URL(page.url()).hash).toBe('');
      expect(new URL(page.url()).pathname).toBe('/console');
      // The key the page showed is a working human key of the new account.
      const me = await send(url, 'GET', '/v0/me/agents', { key: human });
      expect(me.status, JSON.stringify(me.body)).toBe(200);
      // Reloading shows the start again: the code was spent and is not kept anywhere.
      await page.reload();
      await page.waitForSelector('#signed-out:not([hidden])');

      // GitHub refuses (the user denies): the page names why and offers to sign in again.
      github.signIn('Bob-Builder', 'deny');
      await page.click('#sign-in');
      await page.waitForSelector('#failed:not([hidden])', { timeout: 10_000 });
      expect(await page.textContent('#failure')).toBe('You did not authorise Holon on GitHub.');
      expect(new URL(page.url()).hash).toBe('');
      expect(problems).toEqual([]);
      await context.close();
    });
  } finally {
    await github.close();
  }
});

test('the console is hosted only: a dev gateway has no /console', async () => {
  const { startTestGateway } = await import('../support/gateway.js');
  await useAudited(await startTestGateway(), async (g) => {
    expect((await fetch(`${g.url}/console`)).status).toBe(404);
  });
});
