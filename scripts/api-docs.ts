/**
 * docs/api.md, generated from the route table (ROUTE_OPERATIONS, services/api/openapi/index.ts): every REST route,
 * its key, whether only a hosted gateway serves it, and what it does — the same entries that mount the routes and
 * make GET /v0/openapi.json, so the page cannot list a route the gateway does not serve.
 *
 *   node --import tsx scripts/api-docs.ts           writes docs/api.md
 *   node --import tsx scripts/api-docs.ts --check   exit 1 when docs/api.md is not what it would write
 *
 * tests/unit/api-docs.test.ts runs the same comparison.
 */
import path from 'node:path';
import { writeOrCheck } from './generated-file.js';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ROUTE_OPERATIONS } from '../services/api/openapi/index.js';
import type { Auth, Operation } from '../services/api/openapi/operations.js';

export const API_DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../docs/api.md');

const TAGS: Readonly<Record<string, string>> = {
  meta: 'The gateway',
  calls: 'Calls',
  approvals: 'Approvals',
  mandates: 'Mandates',
  receipts: 'Receipts',
  accounts: 'Accounts and statements',
  keys: 'Keys',
  auth: 'Signing in with GitHub',
  publishing: 'Publishing',
  credentials: 'Endpoint credentials',
  agents: 'Agents and the catalogue',
  files: 'Files',
  admin: 'Operator (admin key)',
  demo: 'The demo',
  webhooks: 'Webhooks',
};

const KEYS: Readonly<Record<Auth, string>> = { none: 'none', human: 'human', agent: 'agent', admin: 'admin' };

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function row(op: Operation): string {
  return `| \`${op.method.toUpperCase()} ${op.path}\` | ${op.auth.map((a) => KEYS[a]).join(', ')} | ${op.hostedOnly ? 'yes' : ''} | ${cell(op.summary)} |`;
}

export function renderApi(operations: readonly Operation[] = ROUTE_OPERATIONS): string {
  const out: string[] = [
    '# The HTTP API',
    '',
    '<!-- Generated from the route table (ROUTE_OPERATIONS, services/api/openapi/index.ts) by',
    '     `node --import tsx scripts/api-docs.ts` (npm run docs:api); tests/unit/api-docs.test.ts compares. -->',
    '',
    'Every REST route of the gateway (`spec/gateway.md` §5). The full contract — parameters, bodies, every answer with',
    'examples — is `GET /v0/openapi.json` (OpenAPI 3.1, built from the same route table: `docs/openapi.md`). Keys:',
    '`human` (`hlk_h_…`), `agent` (`hlk_a_…`, one mandate), `admin` (`HOLON_ADMIN_KEY`), `none`; on a dev gateway',
    'nothing asks for a key. The hosted-only routes answer 404 on a dev gateway (`docs/hosted.md`).',
    '',
    'Beside them: `/mcp`, the MCP server (find, hire and pay for agents; `call_agent` also as an MCP task:',
    '`docs/mcp.md`); `GET /metrics` (Prometheus; the admin key when hosted: `docs/operating.md`); `/console`, the',
    'console (`docs/console.md`). A call answers `200 {status, output, receipt}`, `202` (`Prefer: respond-async`, an approval,',
    'or past `HOLON_SYNC_WAIT_S`), `403` denied, `404` unknown mandate or agent, `409` `approval_used` (a spent approval',
    're-sent; its receipt says `denied`, "approval … was already used"), `422` rejected input, `502` the agent failed',
    '(with its receipt); `callback_url` deliveries are Standard Webhooks (`docs/webhooks.md`).',
    '',
    'A mandate id `<ns>/<name>` is two path segments (`GET /v0/mandates/alice/sandbox`, parameters `ns` and `name`); the',
    'whole id as one encoded segment (`alice%2Fsandbox`) is read the same. `POST /v0/files` takes any media type: the',
    'body is the file, its `Content-Type` kept (none: `application/octet-stream`).',
  ];
  const tags = [...new Set(operations.map((o) => o.tag))];
  for (const tag of tags) {
    out.push(
      '',
      `## ${TAGS[tag] ?? tag}`,
      '',
      '| Route | Key | Hosted only | What it does |',
      '|---|---|---|---|',
      ...operations.filter((o) => o.tag === tag).map(row),
    );
  }
  return `${out.join('\n')}\n`;
}

function main(argv: string[]): number {
  return writeOrCheck({
    file: API_DOC,
    text: renderApi(),
    argv,
    stale: 'docs/api.md is not what the route table says: run node --import tsx scripts/api-docs.ts',
    wrote: `${ROUTE_OPERATIONS.length} routes`,
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) process.exitCode = main(process.argv.slice(2));
