/**
 * The console's page itself: served by the gateway in both modes with its strict Content-Security-Policy, the
 * footer's links (the methodology always; terms and privacy only with HOLON_SITE_URL), a GitHub refusal named in
 * plain words in a real browser, a `#login=` link started in another browser (two browser contexts: the one who
 * started it and the one it was sent to) signing nobody in, and the rule that no module of the page ever writes HTML
 * from a string.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { CONSOLE_CSP } from '../../services/api/routes/console.js';
import { launchBrowser } from '../support/browser.js';
import { openConsolePage, settled } from '../support/console-browser.js';
import { startFakeGitHub } from '../support/fake-github.js';
import { freePort } from '../support/processes.js';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { signUp } from '../support/http.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

test('GitHub refusing the sign-in is said in plain words, and the fragment leaves the address bar', async () => {
  const github = await startFakeGitHub();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  try {
    await useAudited(await startTestGateway({ hosted: true, config: { ...github.config, port, publicUrl: url } }), async () => {
      github.addUser({ id: 4242, login: 'Bob-Builder' });
      github.signIn('Bob-Builder', 'deny');
      const cp = await openConsolePage(browser, url);
      await cp.open('');
      await cp.page.click('#sign-in');
      await cp.page.waitForSelector('#failed', { timeout: 10_000 });
      expect(await cp.page.textContent('#failure')).toBe('You did not authorise Holon on GitHub.');
      expect(new URL(cp.page.url()).hash).toBe('');
      expect((await cp.axe()).serious).toEqual([]);
      // A made-up code arriving in a tab that started no sign-in is not used, and said so.
      await cp.page.goto(`${url}/console#login=${'A'.repeat(43)}`);
      await cp.page.waitForSelector('#not-started');
      expect(await cp.page.textContent('#not-started-reason')).toContain('not started in this browser tab');
      expect(cp.problems).toEqual([]);
      await cp.close();
    });
  } finally {
    await github.close();
  }
});

test('a #login= link started in another browser signs nobody in: the key kept stays, the exchange is refused; the browser that started it finishes', async () => {
  const github = await startFakeGitHub();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let release = () => {};
  try {
    await useAudited(await startTestGateway({ hosted: true, config: { ...github.config, port, publicUrl: url } }), async () => {
      const vera = await signUp(url, 'vera');
      github.addUser({ id: 6660, login: 'Mallory' });
      github.signIn('Mallory');

      // Mallory starts signing in in her own browser; her console's exchange is held until Vera has opened the link.
      const attacker = await openConsolePage(browser, url);
      const victimDone = new Promise<void>((resolve) => {
        release = resolve;
      });
      await attacker.context.route('**/v0/auth/exchange', async (route) => {
        await victimDone;
        await route.continue();
      });
      await attacker.open('');
      const callback = attacker.page.waitForResponse((r) => new URL(r.url()).pathname === '/v0/auth/github/callback');
      await attacker.page.click('#sign-in');
      const location = new URL((await callback).headers().location!, url);
      const code = new URLSearchParams(location.hash.slice(1)).get('login');
      expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
      await attacker.page.waitForSelector('#working');

      // Vera, signed in with her own key in her own browser, opens the link Mallory sent: /console#login=<code>.
      const victim = await openConsolePage(browser, url, { key: vera.human });
      const exchanges: number[] = [];
      victim.page.on('response', (r) => {
        if (new URL(r.url()).pathname === '/v0/auth/exchange') exchanges.push(r.status());
      });
      const keptKey = () => victim.page.evaluate(() => sessionStorage.getItem('holon.console.key'));
      await victim.page.goto('about:blank');
      await victim.page.goto(`${url}/console#login=${code}`);
      await victim.page.waitForSelector('#not-started, #signed-in, #failed', { timeout: 10_000 });
      expect(await victim.page.locator('#signed-in').count()).toBe(0);
      expect(await victim.page.textContent('#not-started-reason')).toContain('not started in this browser tab');
      expect(await victim.page.textContent('#not-started')).toContain('You are still signed in with the key this tab kept');
      expect(await keptKey()).toBe(vera.human);
      expect(exchanges).toEqual([]);
      expect(new URL(victim.page.url()).hash).toBe('');
      expect((await victim.axe()).serious).toEqual([]);
      // Going on keeps her in her own account.
      await victim.page.click('#stay');
      await victim.page.waitForSelector('#balances');
      expect(await victim.page.textContent('#who')).toContain('Signed in as vera');

      // Even in a tab with a sign-in of its own pending, the code is not this tab's: the gateway refuses it.
      await victim.page.evaluate(() => sessionStorage.setItem('holon.console.sign-in', 'B'.repeat(43)));
      await victim.page.goto('about:blank');
      await victim.page.goto(`${url}/console#login=${code}`);
      await victim.page.waitForSelector('#failed, #signed-in', { timeout: 10_000 });
      expect(await victim.page.textContent('#failure')).toContain('not started in this browser');
      expect(exchanges).toEqual([400]);
      expect(await keptKey()).toBe(vera.human);
      expect(await victim.page.evaluate(() => sessionStorage.getItem('holon.console.sign-in'))).toBeNull();
      expect(victim.problems).toEqual([]);
      await victim.close();

      // Mallory's own browser, which started the sign-in, trades the code (still unspent) for her keys.
      release();
      await attacker.page.waitForSelector('#signed-in', { timeout: 10_000 });
      expect(await attacker.page.textContent('#handle')).toBe('mallory');
      expect(await attacker.page.evaluate(() => sessionStorage.getItem('holon.console.sign-in'))).toBeNull();
      expect(attacker.problems).toEqual([]);
      await attacker.close();
    });
  } finally {
    release();
    await github.close();
  }
});

test('a dev gateway serves the console too, opening with no key; the footer links the site only when there is one', async () => {
  await useAudited(await startTestGateway(), async (g) => {
    const page = await fetch(`${g.url}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    const html = await page.text();
    expect(html).toContain('<meta name="holon-mode" content="dev">');
    expect(html).toContain('href="/console/methodology"');
    expect(html).not.toContain('/terms');
    const methodology = await fetch(`${g.url}/console/methodology`);
    expect(methodology.status).toBe(200);
    expect(methodology.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect((await fetch(`${g.url}/console/js/app.js`)).headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await fetch(`${g.url}/console/vendor/yaml/index.js`)).status).toBe(200);
    expect((await fetch(`${g.url}/console/nothing.js`)).status).toBe(404);
    expect((await fetch(`${g.url}/console/../package.json`)).status).toBe(404);
  });
  await useAudited(await startTestGateway({ hosted: true, config: { siteUrl: 'https://holon.example/' } }), async (g) => {
    const html = await (await fetch(`${g.url}/console`)).text();
    expect(html).toContain('<meta name="holon-mode" content="hosted">');
    expect(html).toContain('href="https://holon.example/terms"');
    expect(html).toContain('href="https://holon.example/privacy"');
  });
});

test('the open console keeps nothing in the address bar and loads nothing from elsewhere on a dev gateway', async () => {
  await useAudited(await startTestGateway(), async (g) => {
    const cp = await openConsolePage(browser, g.url);
    await cp.open('home');
    await settled(cp.page);
    expect(await cp.page.textContent('#who')).toContain('Dev gateway');
    expect(await cp.page.evaluate(() => ({ session: sessionStorage.length, local: localStorage.length, cookie: document.cookie }))).toEqual({
      session: 0,
      local: 0,
      cookie: '',
    });
    // The checker can fail: an image without a text alternative is a critical violation.
    await cp.page.evaluate(() => document.getElementById('view')!.append(document.createElement('img')));
    expect((await cp.axe()).serious.map((v) => v.id)).toContain('image-alt');
    expect(cp.problems).toEqual([]);
    await cp.close();
  });
});

test('loading the console spends none of the per-address request budget: its files are not API requests', async () => {
  const rateLimits = { perAddressPerMin: 8, perAccountPerMin: 1200, signupsPerHour: 10, publishesPerHour: 30, draftsPerHour: 60, evaluationsPerHour: 10 };
  await useAudited(await startTestGateway({ hosted: true, config: { rateLimits } }), async (g) => {
    for (let i = 0; i < 20; i++) expect((await fetch(`${g.url}/console/vendor/yaml/index.js`)).status).toBe(200);
    expect((await fetch(`${g.url}/v0/catalog`)).status).toBe(200);
    // An unknown console path is no file: it is an ordinary request, and the limit still holds for those.
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push((await fetch(`${g.url}/console/nothing-${i}.js`)).status);
    expect(answers).toContain(429);
  });
});

test('no module of the console writes HTML from a string', () => {
  const dir = new URL('../../services/api/console/js/', import.meta.url).pathname;
  const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.js'));
  expect(files.length).toBeGreaterThan(8);
  for (const file of files) {
    const source = readFileSync(join(dir, file), 'utf8');
    expect(source, file).not.toMatch(
      /\.(innerHTML|outerHTML)\s*=|insertAdjacentHTML|document\.write|\beval\(|new Function\(|localStorage|document\.cookie\s*=/,
    );
  }
});
