/**
 * `npm run console:screenshots`: the console's screenshots in docs/console/ (docs/console.md links them), every page at
 * 1280 and 390 px wide (`home-1280.png`, `home-390.png`, …), each checked by axe-core, with a table of violations by
 * impact. A hosted gateway seeded with realistic traffic (tests/support/console-seed.ts) serves the hosted pages, a
 * dev gateway (no keys) the dev one (#/try with an agent chosen); the static methodology page is the hosted one's.
 * Every page runs under the guards of tests/support/console-browser.ts (console errors, uncaught exceptions, 5xx
 * answers, requests to other origins): any problem, or a page that shows an error or does not render, is printed at
 * the end and the exit code is 1.
 *
 * Postgres and Redis: DATABASE_URL and REDIS_URL, else the machine's own on 127.0.0.1 (5432, user postgres; 6379).
 * Chromium: /usr/bin/chromium, or HOLON_CHROMIUM.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser } from 'playwright-core';

process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
process.env.REDIS_URL ??= 'redis://127.0.0.1:6379';

const { launchBrowser } = await import('../tests/support/browser.js');
const { openConsolePage, settled } = await import('../tests/support/console-browser.js');
const { seedConsoleGateway, startConsoleDevGateway } = await import('../tests/support/console-seed.js');
const { REPO_ROOT } = await import('../tests/support/processes.js');

const WIDTHS = [1280, 390] as const;
const OUT = path.join(REPO_ROOT, 'docs/console');
const IMPACTS = ['critical', 'serious', 'moderate', 'minor'] as const;

type Who = 'none' | 'caller' | 'author' | 'admin';

interface Shot {
  /** The file name's stem: docs/console/<name>-<width>.png. */
  name: string;
  gateway: 'hosted' | 'dev';
  who: Who;
  /** A console route (`home`, `receipts/<id>`), or a path of the gateway for a static page. */
  route?: string;
  path?: string;
  /** The page's title as app.js sets it (`<title> · Holon console`): the page is the one asked for. */
  title?: string;
}

interface Row {
  shot: string;
  width: number;
  /** axe-core's violations (rules broken) by impact; null when the page was not checked. */
  counts: Record<(typeof IMPACTS)[number], number> | null;
  violations: string[];
  problems: number;
  /** Why the page failed: not rendered, an error shown, not found. */
  notes: string[];
  /** Worth a look, not a failure. */
  warnings: string[];
}

const stops: Array<() => Promise<unknown>> = [];
let stopping: Promise<void> | undefined;
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    for (const s of stops.reverse()) await s().catch((e) => console.error(`while stopping: ${(e as Error).message}`));
  })();
  return stopping;
}
process.once('SIGINT', () => {
  console.error('interrupted: stopping the gateways and the browser');
  void stopAll().then(() => process.exit(130));
});

async function main(): Promise<number> {
  await mkdir(OUT, { recursive: true });
  const started = Date.now();
  console.log('seeding a hosted gateway…');
  const hosted = await seedConsoleGateway();
  stops.push(() => hosted.stop());
  console.log(`hosted gateway at ${hosted.url} (caller ${hosted.caller.handle}, author ${hosted.author.handle})`);
  const dev = await startConsoleDevGateway();
  stops.push(() => dev.stop());
  console.log(`dev gateway at ${dev.url}`);
  const browser: Browser = await launchBrowser();
  stops.push(() => browser.close());

  const keys: Record<Who, string | undefined> = { none: undefined, caller: hosted.caller.human, author: hosted.author.human, admin: hosted.adminKey };
  const shots: Shot[] = [
    { name: 'sign-in', gateway: 'hosted', who: 'none', route: '', title: 'Sign in' },
    { name: 'home', gateway: 'hosted', who: 'caller', route: 'home', title: 'Home' },
    // Under the work mandate (the page starts on the sign-up sandbox, which allows none of the test registry's agents).
    { name: 'try', gateway: 'hosted', who: 'caller', route: `try?mandate=${hosted.caller.handle}/work`, title: 'Try an agent' },
    { name: 'mandates', gateway: 'hosted', who: 'caller', route: 'mandates', title: 'Mandates and keys' },
    { name: 'approvals', gateway: 'hosted', who: 'caller', route: 'approvals', title: 'Approvals' },
    { name: 'calls', gateway: 'hosted', who: 'caller', route: 'calls', title: 'Calls' },
    ...(hosted.receiptWithChildren
      ? [{ name: 'receipt', gateway: 'hosted', who: 'caller', route: `receipts/${hosted.receiptWithChildren}`, title: 'Receipt' } as const]
      : []),
    { name: 'month', gateway: 'hosted', who: 'caller', route: `month/${hosted.month}`, title: 'Month' },
    { name: 'publish', gateway: 'hosted', who: 'author', route: 'publish', title: 'Publish' },
    { name: 'operator', gateway: 'hosted', who: 'admin', route: 'operator', title: 'Operator' },
    { name: 'try-dev', gateway: 'dev', who: 'none', route: 'try/examples/echo-upper', title: 'Try an agent' },
    { name: 'methodology', gateway: 'hosted', who: 'none', path: '/console/methodology' },
  ];
  if (!hosted.receiptWithChildren) console.log('note: the seeded delegated call has no children; no receipt screenshot');

  const rows: Row[] = [];
  const problems: string[] = [];
  for (const width of WIDTHS) {
    for (const shot of shots) {
      const row = await take(browser, shot, width, shot.gateway === 'dev' ? dev.url : hosted.url, keys[shot.who]);
      rows.push(row.row);
      problems.push(...row.problems);
      const c = row.row.counts;
      const axe = c ? `critical ${c.critical}, serious ${c.serious}, moderate ${c.moderate}, minor ${c.minor}` : 'not checked';
      const after = [...(row.problems.length ? [`${row.problems.length} problem(s)`] : []), ...row.row.notes, ...row.row.warnings];
      console.log(`${`${shot.name}-${width}.png`.padEnd(22)} ${axe}${after.length ? `; ${after.join('; ')}` : ''}`);
    }
  }

  printTable(rows);
  const failures = [...problems, ...rows.flatMap((r) => r.notes.map((n) => `${r.shot}-${r.width}: ${n}`))];
  const warnings = rows.flatMap((r) => r.warnings.map((w) => `${r.shot}-${r.width}: ${w}`));
  const written = rows.filter((r) => r.counts).length;
  console.log(
    `\n${written} of ${rows.length} screenshots written to ${path.relative(process.cwd(), OUT) || OUT} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  if (warnings.length) {
    console.log(`\n${warnings.length} warning(s):`);
    for (const w of warnings) console.log(`  ${w}`);
  }
  if (failures.length) {
    console.log(`\n${failures.length} problem(s):`);
    for (const p of failures) console.log(`  ${p}`);
    return 1;
  }
  console.log('\nno problems');
  return 0;
}

/**
 * One page at one width, in a fresh browser context: open, wait until rendered, screenshot, axe. A page that does not
 * render or shows an error gets neither a screenshot (the one in docs/ stays) nor an axe run: it is a problem.
 */
async function take(browser: Browser, shot: Shot, width: number, base: string, key: string | undefined): Promise<{ row: Row; problems: string[] }> {
  const file = path.join(OUT, `${shot.name}-${width}.png`);
  const notes: string[] = [];
  const warnings: string[] = [];
  const cp = await openConsolePage(browser, base, { width, ...(key ? { key } : {}) });
  try {
    if (shot.path !== undefined) {
      const response = await cp.page.goto(`${base}${shot.path}`, { waitUntil: 'load' });
      if (response?.status() !== 200) notes.push(`GET ${shot.path} answered ${response?.status() ?? 'nothing'}`);
    } else {
      // openConsolePage's `open` changes only the fragment when a key was set first (the page was loaded to keep
      // it): the previous page may still be showing, so wait for the title of the page asked for, then settle again.
      await cp.open(shot.route ?? '').catch((e: Error) => notes.push(`did not render: ${firstLine(e.message)}`));
      const title = `${shot.title} · Holon console`;
      await cp.page
        .waitForFunction((t) => document.title === t, title, { timeout: 15_000 })
        .then(() => settled(cp.page))
        .catch(async () => notes.push(`shows "${await cp.page.title()}", not "${title}"`));
      const shown = await cp.page.$$eval('#view .notice.error', (nodes) => nodes.map((n) => (n.textContent ?? '').trim()));
      for (const message of shown) notes.push(`shows an error: ${message}`);
    }
    let counts: Row['counts'] = null;
    let violations: string[] = [];
    if (!notes.length) {
      // Fonts and one more frame; the heading the router focused is blurred, so no focus ring is in the picture.
      await cp.page.evaluate(async () => {
        await document.fonts.ready;
        (document.activeElement as HTMLElement | null)?.blur();
        await new Promise((resolve) => requestAnimationFrame(() => resolve(null)));
      });
      const wide = await cp.page.evaluate(() => document.documentElement.scrollWidth);
      if (wide > width) warnings.push(`the page is ${wide} px wide in a ${width} px window`);
      await cp.page.screenshot({ path: file, fullPage: true });
      const axe = await cp.axe();
      counts = { critical: 0, serious: 0, moderate: 0, minor: 0 };
      for (const v of axe.violations) if (v.impact && v.impact in counts) counts[v.impact as keyof typeof counts] += 1;
      violations = axe.violations.map((v) => `${v.impact ?? 'unknown'} ${v.id} (${v.nodes} node${v.nodes === 1 ? '' : 's'}): ${v.help}`);
    }
    return {
      row: { shot: shot.name, width, counts, violations, problems: cp.problems.length, notes, warnings },
      problems: cp.problems.map((p) => `${shot.name}-${width} (${shot.path ?? `#/${shot.route}`}): ${p}`),
    };
  } finally {
    await cp.close();
  }
}

const firstLine = (s: string) => s.split('\n')[0] ?? s;

function printTable(rows: Row[]): void {
  const header = ['page', 'width', ...IMPACTS, 'problems'];
  const cells = rows.map((r) => [r.shot, String(r.width), ...IMPACTS.map((i) => (r.counts ? String(r.counts[i]) : '—')), String(r.problems)]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((v, i) => (i < 1 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join(' | ')} |`;
  console.log('\naxe-core violations by impact (rules broken; the nodes of each are listed below):\n');
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (i < 1 ? `${'-'.repeat(w + 1)}-` : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const c of cells) console.log(line(c));
  const detailed = rows.filter((r) => r.violations.length);
  if (detailed.length) {
    console.log('\nviolations:');
    for (const r of detailed) for (const v of r.violations) console.log(`  ${r.shot}-${r.width}: ${v}`);
  }
}

let code = 1;
try {
  code = await main();
} catch (e) {
  console.error(e instanceof Error ? (e.stack ?? e.message) : e);
} finally {
  await stopAll();
}
process.exit(code);
