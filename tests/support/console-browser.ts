/**
 * The console in a real browser (headless Chromium through playwright-core), with the guards every console test
 * runs under: any console error, any uncaught exception, any 5xx answer and any request to another origin is a
 * problem, and `axe-core` (injected through the DevTools protocol, so the page's own CSP stays in force) reports
 * accessibility violations. The one console error Chromium itself writes for a handled 4xx answer of the API
 * ("Failed to load resource: … status of 4xx") is not a page error: the page asked, the API refused, the page
 * showed the refusal — each test asserts that refusal on screen.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Console errors, uncaught exceptions, 5xx answers and foreign requests seen so far. */
  problems: string[];
  /** Open a console route (`home`, `calls?status=failed`) and wait until the page has rendered it. */
  open(route: string): Promise<void>;
  /** axe-core on the page as it is now: every violation, and the serious or critical ones. */
  axe(): Promise<{ violations: AxeViolation[]; serious: AxeViolation[] }>;
  close(): Promise<void>;
}

const HANDLED_4XX = /^Failed to load resource: the server responded with a status of 4\d\d\b/;

export async function openConsolePage(browser: Browser, base: string, options: { width?: number; key?: string } = {}): Promise<ConsolePage> {
  const origin = new URL(base).origin;
  const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !HANDLED_4XX.test(m.text())) problems.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 500) problems.push(`${r.status()} from ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  // Nothing the console loads may come from anywhere but the gateway: a request elsewhere is refused and noted.
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('blob:') || url.startsWith('data:') || new URL(url).origin === origin) return route.continue();
    problems.push(`request to another origin: ${url}`);
    return route.abort();
  });
  if (options.key) {
    await page.goto(`${base}/console#/`);
    await page.evaluate((k) => sessionStorage.setItem('holon.console.key', k), options.key);
  }
  const cp: ConsolePage = {
    page,
    context,
    problems,
    async open(route) {
      // A fresh load each time: going to an address that differs only in its fragment would not reload the page.
      await page.goto('about:blank');
      await page.goto(`${base}/console#/${route}`);
      await settled(page);
    },
    async axe() {
      if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
      const result = (await page.evaluate(() =>
        (window as unknown as { axe: { run(o: unknown): Promise<unknown> } }).axe.run({ resultTypes: ['violations'] }),
      )) as { violations: Array<{ id: string; impact: string | null; help: string; nodes: unknown[] }> };
      const violations = result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
      return { violations, serious: violations.filter((v) => v.impact === 'serious' || v.impact === 'critical') };
    },
    close: () => context.close(),
  };
  return cp;
}

/** The route has rendered: no "Loading…" left and the main region is not busy. */
export async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const view = document.getElementById('view');
    return view && !view.hasAttribute('aria-busy') && !view.querySelector('.loading') && view.querySelector('h1');
  });
}
