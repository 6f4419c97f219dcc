/**
 * docs/configuration.md, generated from the declarations of shared/platform/settings/ (DOCUMENTED): every
 * environment variable, its default, what it does and which roles read it, and what production requires.
 *
 *   node --import tsx scripts/config-docs.ts           writes docs/configuration.md
 *   node --import tsx scripts/config-docs.ts --check   exit 1 when docs/configuration.md is not what it would write
 *
 * tests/unit/config-docs.test.ts runs the same comparison, so a setting declared without regenerating the page fails
 * the unit tests.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Documented, type Reader, ROLES, type Section } from '../shared/platform/settings/declare.js';
import { DOCUMENTED, SETTINGS } from '../shared/platform/settings/index.js';
import { leaves } from '../shared/platform/settings/walk.js';
import { writeOrCheck } from './generated-file.js';

export const CONFIGURATION_DOC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../docs/configuration.md');

const SECTIONS: ReadonlyArray<{ section: Section; title: string; intro?: () => string }> = [
  { section: 'gateway', title: 'The gateway, in any mode' },
  { section: 'hosted', title: 'Hosted mode and production', intro: productionIntro },
  { section: 'webhooks', title: 'Webhooks (`docs/webhooks.md`)' },
  { section: 'payments', title: 'Payments from outside: x402, MPP, top-ups, payouts (`docs/payments.md`)' },
  { section: 'observability', title: 'Metrics, traces and logs (`docs/operating.md`)' },
  { section: 'tools', title: "The command line's client commands and the reference agent host" },
];

/** What production requires, from the declarations' production rules. */
function productionIntro(): string {
  const rules = leaves(SETTINGS, undefined, undefined).flatMap(({ declared }) => (declared.production ? [{ env: declared.env, ...declared.production }] : []));
  const needed = rules.filter((r) => r.needs).map((r) => `\`${r.env}\``);
  const refused = rules.flatMap((r) => (r.refuses ? [r.refuses] : []));
  return (
    `With \`NODE_ENV=production\` the gateway refuses to start without ${needed.slice(0, -1).join(', ')} and ${needed.at(-1)} (each set ` +
    `explicitly), ${refused.join(', ')}, or with a secret that does not look random or serves two settings ` +
    '(`docs/operating.md`, "Settings" and "Secrets").'
  );
}

/** `every role` for the four roles together, then the other readers, in the table's words. */
export function readersText(roles: readonly Reader[]): string {
  const all = ROLES.every((r) => roles.includes(r));
  const rest = roles.filter((r) => !(all && ROLES.includes(r)));
  const named = rest.map((r) => (r === 'serve' ? '`holon serve`' : r));
  return [...(all ? ['every role'] : []), ...named].join(', ');
}

/** The default in words, and a number's allowed range. */
function defaultText(s: Documented): string {
  const range = s.bounds ? `${s.bounds.min} to ${s.bounds.max}` : '';
  return [s.shown, range].filter(Boolean).join('; ') || '—';
}

function row(s: Documented): string {
  const cells = [defaultText(s), s.doc];
  for (const text of cells) {
    if (text.includes('|') || text.includes('\n')) throw new Error(`${s.env}: a table cell may not hold "|" or a line break`);
  }
  return `| \`${s.env}\` | ${cells[0]} | ${cells[1]} | ${readersText(s.roles)} |`;
}

export function renderConfiguration(settings: readonly Documented[] = DOCUMENTED): string {
  const seen = new Set<string>();
  for (const s of settings) {
    if (seen.has(s.env)) throw new Error(`${s.env} is declared twice`);
    seen.add(s.env);
  }
  const out: string[] = [
    '# Configuration',
    '',
    '<!-- Generated from the declarations of shared/platform/settings/ by `node --import tsx scripts/config-docs.ts`',
    '     (npm run docs:config). Edit a declaration there, then regenerate; tests/unit/config-docs.test.ts compares. -->',
    '',
    'Every environment variable Holon reads. The gateway reads its own in one place, `shared/platform/config.ts`, at',
    'start-up: an invalid value stops the start with every problem listed. Command-line options (`--port`, `--host`,',
    "`--db`, `--registry`, `--mandates`, `--hosted`) win over the environment. A number's allowed range follows its default.",
    '',
    '"Read by" names the roles that use a setting: `api`, `runner`, `settler`, `evaluator` (`holon serve` runs all four,',
    'so it reads what any of them reads; `holon serve` alone marks what only the one-process dev gateway does), the',
    "other commands of the CLI, the reference MCP agent host (`agents/host.mjs`) and the image's entrypoint",
    '(`infra/entrypoint.sh`). Scaled out, give every process the same values: `docs/operating.md`, "Scaling out".',
  ];
  for (const { section, title, intro } of SECTIONS) {
    const rows = settings.filter((s) => s.section === section);
    if (!rows.length) continue;
    out.push('', `## ${title}`, '');
    if (intro) out.push(intro(), '');
    out.push('| Variable | Default | What it does | Read by |', '|---|---|---|---|', ...rows.map(row));
  }
  const listed = new Set(SECTIONS.map((g) => g.section));
  const stray = settings.filter((s) => !s.section || !listed.has(s.section));
  if (stray.length) throw new Error(`settings in no section: ${stray.map((s) => s.env).join(', ')}`);
  return `${out.join('\n')}\n`;
}

function main(argv: string[]): number {
  return writeOrCheck({
    file: CONFIGURATION_DOC,
    text: renderConfiguration(),
    argv,
    stale: 'docs/configuration.md is not what shared/platform/settings/ declares: run node --import tsx scripts/config-docs.ts',
    wrote: `${DOCUMENTED.length} variables`,
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) process.exitCode = main(process.argv.slice(2));
