/**
 * docs/configuration.md, generated from the table of settings in shared/platform/config.ts (SETTINGS): every
 * environment variable, its default, what it does and which roles read it.
 *
 *   node --import tsx scripts/config-docs.ts           writes docs/configuration.md
 *   node --import tsx scripts/config-docs.ts --check   exit 1 when docs/configuration.md is not what it would write
 *
 * tests/unit/config-docs.test.ts runs the same comparison, so a setting added to config.ts without regenerating the
 * page fails the unit tests.
 */
import path from 'node:path';
import { writeOrCheck } from './generated-file.js';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ROLES, SETTINGS, type Setting, type SettingGroup, type SettingReader } from '../shared/platform/config.js';

export const CONFIGURATION_DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../docs/configuration.md');

const GROUPS: ReadonlyArray<{ group: SettingGroup; title: string; intro?: string }> = [
  { group: 'gateway', title: 'The gateway, in any mode' },
  {
    group: 'hosted',
    title: 'Hosted mode and production',
    intro:
      'With `NODE_ENV=production` the gateway refuses to start without `DATABASE_URL`, `HOLON_PUBLIC_URL`, `HOLON_SITE_URL`,\n' +
      '`HOLON_FILE_SECRET`, `HOLON_ADMIN_KEY` and `HOLON_TRUST_PROXY` (set explicitly), and refuses\n' +
      '`HOLON_ALLOW_PRIVATE_ENDPOINTS=1` (`docs/operating.md`, "Settings").',
  },
  { group: 'webhooks', title: 'Webhooks (`docs/webhooks.md`)' },
  { group: 'observability', title: 'Metrics, traces and logs (`docs/operating.md`)' },
  { group: 'tools', title: "The command line's client commands and the reference agent host" },
];

/** `every role` for the four roles together, then the other readers, in the table's words. */
export function readersText(readBy: readonly SettingReader[]): string {
  const all = ROLES.every((r) => readBy.includes(r));
  const rest = readBy.filter((r) => !(all && ROLES.includes(r)));
  const named = rest.map((r) => (r === 'serve' ? '`holon serve`' : r));
  return [...(all ? ['every role'] : []), ...named].join(', ');
}

function row(s: Setting): string {
  for (const text of [s.default, s.what]) {
    if (text.includes('|') || text.includes('\n')) throw new Error(`${s.name}: a table cell may not hold "|" or a line break`);
  }
  return `| \`${s.name}\` | ${s.default || '—'} | ${s.what} | ${readersText(s.readBy)} |`;
}

export function renderConfiguration(settings: readonly Setting[] = SETTINGS): string {
  const seen = new Set<string>();
  for (const s of settings) {
    if (seen.has(s.name)) throw new Error(`${s.name} is listed twice in SETTINGS`);
    seen.add(s.name);
  }
  const out: string[] = [
    '# Configuration',
    '',
    '<!-- Generated from SETTINGS in shared/platform/config.ts by `node --import tsx scripts/config-docs.ts`',
    '     (npm run docs:config). Edit the table there, then regenerate; tests/unit/config-docs.test.ts compares. -->',
    '',
    'Every environment variable Holon reads. The gateway reads its own in one place, `shared/platform/config.ts`, at',
    'start-up: an invalid value stops the start with every problem listed. Command-line options (`--port`, `--host`,',
    '`--db`, `--registry`, `--mandates`, `--hosted`) win over the environment.',
    '',
    '"Read by" names the roles that use a setting: `api`, `runner`, `settler`, `evaluator` (`holon serve` runs all four,',
    'so it reads what any of them reads; `holon serve` alone marks what only the one-process dev gateway does), the',
    "other commands of the CLI, the reference MCP agent host (`agents/host.mjs`) and the image's entrypoint",
    '(`infra/entrypoint.sh`). Scaled out, give every process the same values: `docs/operating.md`, "Scaling out".',
  ];
  for (const { group, title, intro } of GROUPS) {
    const rows = settings.filter((s) => s.group === group);
    if (!rows.length) continue;
    out.push('', `## ${title}`, '');
    if (intro) out.push(intro, '');
    out.push('| Variable | Default | What it does | Read by |', '|---|---|---|---|', ...rows.map(row));
  }
  const grouped = new Set(GROUPS.map((g) => g.group));
  const stray = settings.filter((s) => !grouped.has(s.group));
  if (stray.length) throw new Error(`settings in no group: ${stray.map((s) => s.name).join(', ')}`);
  return `${out.join('\n')}\n`;
}

function main(argv: string[]): number {
  return writeOrCheck({
    file: CONFIGURATION_DOC,
    text: renderConfiguration(),
    argv,
    stale: 'docs/configuration.md is not what shared/platform/config.ts says: run node --import tsx scripts/config-docs.ts',
    wrote: `${SETTINGS.length} variables`,
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) process.exitCode = main(process.argv.slice(2));
