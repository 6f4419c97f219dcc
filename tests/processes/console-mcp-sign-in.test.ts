/**
 * The console's consent page for an MCP client signing in (services/api/console/js/pages/authorize.js; docs/mcp.md,
 * "Signing in from an MCP client") in headless Chromium, checked by axe-core: a signed-out browser opens the client's
 * authorization URL, signs in with GitHub (a fake GitHub on loopback) and comes back to the request across that round
 * trip, sees which client asks (its name, the host of its metadata document, a warning for a redirect to this
 * computer), approves under one of its mandates, and lands on the client's callback with the code, which the client
 * trades for a working token; the key is then listed with its client. A denial and an answered request are said too.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { launchBrowser } from '../support/browser.js';
import { openConsolePage, settled } from '../support/console-browser.js';
import { startFakeGitHub } from '../support/fake-github.js';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { send } from '../support/http.js';
import { CLIENT_GUARD, startClientDocuments, type ClientDocuments } from '../support/mcp-clients.js';
import { freePort } from '../support/processes.js';

let browser: Browser;
let docs: ClientDocuments;
beforeAll(async () => {
  browser = await launchBrowser();
  docs = await startClientDocuments();
});
afterAll(async () => {
  await browser?.close();
  await docs?.close();
});

function authorizeUrl(base: string, clientId: string, redirect: string): { url: string; verifier: string } {
  const verifier = randomBytes(32).toString('base64url');
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirect,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'browser-state',
    resource: `${base}/mcp`,
  });
  return { url: `${base}/oauth/authorize?${q}`, verifier };
}

test('signed out: GitHub sign-in comes back to the request; the page says who asks; approving sends the browser to the client with a code that works', async () => {
  const github = await startFakeGitHub();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const callbackPort = await freePort();
  const redirect = `http://127.0.0.1:${callbackPort}/callback`;
  try {
    await useAudited(await startTestGateway({ hosted: true, outboundGuard: CLIENT_GUARD, config: { ...github.config, port, publicUrl: base } }), async () => {
      github.addUser({ id: 7070, login: 'Carol' });
      github.signIn('Carol');
      const clientId = docs.document('/console-client.json', [redirect], { client_name: 'Carol’s Claude Code' });
      const { url, verifier } = authorizeUrl(base, clientId, redirect);

      const cp = await openConsolePage(browser, base);
      const landed: string[] = [];
      // The client's callback on this computer: answered here, the URL kept (registered last, so it comes first).
      await cp.context.route(`http://127.0.0.1:${callbackPort}/**`, (route) => {
        landed.push(route.request().url());
        return route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>done</title><h1>Connected</h1>' });
      });
      await cp.page.goto(url);
      await cp.page.waitForSelector('#signed-out', { timeout: 10_000 });
      expect(await cp.page.textContent('#signed-out')).toContain('An MCP client asks to connect to your Holon account');
      expect((await cp.axe()).serious).toEqual([]);

      await cp.page.click('#sign-in');
      await cp.page.waitForSelector('#signed-in', { timeout: 10_000 });
      await cp.page.click('#continue');
      await cp.page.waitForSelector('#consent', { timeout: 10_000 });
      await settled(cp.page);
      expect(await cp.page.textContent('h1')).toBe('Carol’s Claude Code asks to connect');
      expect(await cp.page.textContent('#client-host')).toBe(`client.published.test:${docs.port}`);
      expect(await cp.page.textContent('#redirect-host')).toBe(`127.0.0.1:${callbackPort}`);
      expect(await cp.page.textContent('#loopback-warning')).toContain('a program on this computer');
      expect(await cp.page.locator('#consent select option').allTextContents()).toEqual([expect.stringMatching(/^carol\/sandbox \(.* EUR left\)$/)]);
      const axe = await cp.axe();
      expect(axe.serious).toEqual([]);

      await cp.page.click('#approve');
      await cp.page.waitForURL(`http://127.0.0.1:${callbackPort}/**`, { timeout: 10_000 });
      const back = new URL(landed[0]!);
      expect(back.searchParams.get('state')).toBe('browser-state');
      expect(back.searchParams.get('iss')).toBe(base);
      const code = back.searchParams.get('code')!;
      expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(cp.problems).toEqual([]);

      const token = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: redirect }),
      });
      expect(token.status).toBe(200);
      const issued = (await token.json()) as { access_token: string };
      const me = await send(base, 'GET', '/v0/me', { key: issued.access_token });
      expect(me.body).toMatchObject({ kind: 'agent', mandate: { id: 'carol/sandbox' } });

      // The console lists the key with its client.
      await cp.page.goto(`${base}/console#/mandates`);
      await settled(cp.page);
      expect(await cp.page.textContent('#view')).toContain(`Carol’s Claude Code (client.published.test:${docs.port})`);
      expect((await cp.axe()).serious).toEqual([]);
      expect(cp.problems).toEqual([]);
      await cp.close();
    });
  } finally {
    await github.close();
  }
});

test('signed in: denying sends the browser back with access_denied; an answered request is said in words', async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const redirect = 'https://app.published.test/cb';
  await useAudited(await startTestGateway({ hosted: true, outboundGuard: CLIENT_GUARD, config: { port, publicUrl: base } }), async () => {
    const signup = await send(base, 'POST', '/v0/signup', { body: { handle: 'dora', email: 'dora@example.test' } });
    const clientId = docs.document('/deny-client.json', [redirect], { client_name: 'Some Web App' });
    const cp = await openConsolePage(browser, base, { key: signup.body.keys.human.key });
    const landed: string[] = [];
    await cp.context.route('https://app.published.test/**', (route) => {
      landed.push(route.request().url());
      return route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>back</title>' });
    });
    const { url } = authorizeUrl(base, clientId, redirect);
    await cp.page.goto(url);
    await cp.page.waitForSelector('#consent');
    await settled(cp.page);
    expect(await cp.page.locator('#loopback-warning').count()).toBe(0);
    const consentUrl = cp.page.url();
    await cp.page.click('#deny');
    await cp.page.waitForURL('https://app.published.test/**');
    expect(Object.fromEntries(new URL(landed[0]!).searchParams)).toMatchObject({ error: 'access_denied', state: 'browser-state', iss: base });

    // The same request again: answered already.
    await cp.page.goto('about:blank');
    await cp.page.goto(consentUrl);
    await cp.page.waitForSelector('#gone');
    expect(await cp.page.textContent('#gone')).toContain('answered already');
    expect((await cp.axe()).serious).toEqual([]);
    expect(cp.problems).toEqual([]);
    await cp.close();
  });
});
