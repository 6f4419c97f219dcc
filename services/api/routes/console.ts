/**
 * The console (docs/console.md): the web page for the people who pay, approve and publish, at `/console`, served
 * by the gateway itself (gateway.md §7: "pages and fonts are served by the gateway itself: no third-party
 * request"). Plain ES modules from services/api/console/ — no build step, no CDN, no analytics. The page calls the
 * same `/v0` API as everyone else with the key as a Bearer header; there is no console-only route.
 *
 * The manifest editor parses YAML with the `yaml` package's own browser build, served from the installed package at
 * /console/vendor/yaml/. Every file is read once at start-up. The two pages are rendered then too: the gateway's mode (`dev` opens on the
 * dev mandates with no key, `hosted` asks for one) and the footer's terms and privacy links on HOLON_SITE_URL (none
 * when it is unset) are written into the HTML, so the page needs no inline script. A strict Content-Security-Policy
 * allows only this origin's own script, style and requests, no framing, no referrer.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Router, type Response } from 'express';

const DIR = new URL('../console/', import.meta.url);
/** The `yaml` package's browser build (plain ES modules), for the manifest editor: served as it ships. */
const YAML_DIR = new URL('browser/dist/', pathToFileURL(createRequire(import.meta.url).resolve('yaml/package.json')));

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export interface ConsoleOptions {
  hosted: boolean;
  /** HOLON_SITE_URL: the footer links to its /terms and /privacy pages. */
  siteUrl?: string;
}

function secure(res: Response): Response {
  return res.set({
    'Content-Security-Policy': CONSOLE_CSP,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
    'Cross-Origin-Opener-Policy': 'same-origin',
  });
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The footer's links: the methodology page always, the site's terms and privacy pages when there is a site. */
function footerLinks(siteUrl: string | undefined): string {
  const links = ['<a href="/console/methodology">How Holon measures and bills</a>'];
  if (siteUrl) {
    const site = siteUrl.replace(/\/+$/, '');
    links.push(
      `<a href="${escapeHtml(`${site}/terms`)}" rel="noreferrer">Terms</a>`,
      `<a href="${escapeHtml(`${site}/privacy`)}" rel="noreferrer">Privacy</a>`,
    );
  }
  return links.join('\n      ');
}

/** Every file under the console directory, by its path below it (`js/pages/home.js`). */
function listFiles(dir: URL, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) out.push(...listFiles(new URL(`${entry.name}/`, dir), `${prefix}${entry.name}/`));
    else if (TYPES[entry.name.slice(entry.name.lastIndexOf('.'))]) out.push(`${prefix}${entry.name}`);
  }
  return out;
}

function render(file: string, options: ConsoleOptions): Buffer {
  const raw = readFileSync(new URL(file, DIR));
  if (!file.endsWith('.html')) return raw;
  return Buffer.from(
    raw
      .toString('utf8')
      .replaceAll('{{mode}}', options.hosted ? 'hosted' : 'dev')
      .replaceAll('{{footer}}', footerLinks(options.siteUrl)),
  );
}

export function consoleRoutes(options: ConsoleOptions): Router {
  const router = Router();
  const pages: Record<string, string> = { '/console': 'index.html', '/console/methodology': 'methodology.html' };
  const assets = new Map<string, { body: Buffer; type: string }>();
  for (const file of listFiles(DIR)) {
    const type = TYPES[file.slice(file.lastIndexOf('.'))]!;
    const route = Object.entries(pages).find(([, f]) => f === file)?.[0] ?? `/console/${file}`;
    assets.set(route, { body: render(file, options), type });
  }
  for (const file of listFiles(YAML_DIR)) assets.set(`/console/vendor/yaml/${file}`, { body: readFileSync(new URL(file, YAML_DIR)), type: TYPES['.js']! });
  router.get(/^\/console(?:\/.*)?$/, (req, res, next) => {
    const asset = assets.get(req.path === '/console/' ? '/console' : req.path);
    if (!asset) {
      next();
      return;
    }
    secure(res).type(asset.type).send(asset.body);
  });
  return router;
}
