/**
 * The console page (hosted only): `GET /console` and its script and style, served by the gateway itself (gateway.md
 * §7: "pages and fonts are served by the gateway itself: no third-party request"). Today it completes the GitHub
 * sign-in: GitHub's callback redirects to `/console#login=<code>` and the page trades the code for the keys
 * (services/api/console/console.js). Static, read once at start-up, with a strict Content-Security-Policy: only this
 * origin's own script and style, no inline code, no framing, no referrer (the fragment never leaves the browser).
 */
import { readFileSync } from 'node:fs';
import { Router, type Response } from 'express';

const DIR = new URL('../console/', import.meta.url);

const ASSETS = {
  '/console': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/console/console.js': { file: 'console.js', type: 'text/javascript; charset=utf-8' },
  '/console/console.css': { file: 'console.css', type: 'text/css; charset=utf-8' },
  '/console/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
} as const;

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

function secure(res: Response): Response {
  return res.set({
    'Content-Security-Policy': CONSOLE_CSP,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  });
}

export function consoleRoutes(hosted: boolean): Router {
  const router = Router();
  if (!hosted) return router;
  for (const [route, asset] of Object.entries(ASSETS)) {
    const body = readFileSync(new URL(asset.file, DIR));
    router.get(route, (_req, res) => {
      secure(res).type(asset.type).send(body);
    });
  }
  return router;
}
