/**
 * Only the calls module writes `calls.status` (`npm run lint`; docs/ARCHITECTURE.md): every transition of a call is
 * a function of shared/calls/transitions.ts, so the state machine drawn there is the whole of it. This fails when a
 * TypeScript file of shared/, services/ or scripts/ elsewhere writes the column: a knex statement on the calls table
 * whose update or insert sets `status`, or SQL text that updates calls setting status, or inserts into calls with a
 * status column.
 * The SQL functions (shared/calls/sql/) and the migrations that create them are the database's side of the same rules.
 * Tests and benches may write rows as they please.
 *
 *   node --import tsx scripts/lint-call-status.ts
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SCANNED = ['shared', 'services', 'scripts'];

/** Where writing `calls.status` belongs (paths relative to the repository, `/` separated). */
const ALLOWED: readonly RegExp[] = [/^shared\/calls\/transitions\.ts$/, /^shared\/calls\/sql\//, /^shared\/db\/migrations\//];

export interface StatusWrite {
  line: number;
  text: string;
}

const lineOf = (source: string, index: number): number => source.slice(0, index).split('\n').length;

/** knex: a statement on the calls table whose update or insert names `status` (up to the next semicolon). */
function knexWrites(source: string): StatusWrite[] {
  const found: StatusWrite[] = [];
  for (const m of source.matchAll(/\(\s*['"]calls['"]\s*\)/g)) {
    const end = source.indexOf(';', m.index);
    const statement = source.slice(m.index, end < 0 ? undefined : end);
    const write = /\.(update|insert)\s*\(/.exec(statement);
    if (write && /\bstatus\b/.test(statement.slice(write.index))) found.push({ line: lineOf(source, m.index), text: `knex ${write[1]} of calls.status` });
  }
  return found;
}

/** SQL text: an UPDATE of calls whose SET assigns status (before its WHERE), or an INSERT into calls naming status. */
function sqlWrites(source: string): StatusWrite[] {
  const found: StatusWrite[] = [];
  const update = /\bUPDATE\s+calls\b(?:\s+(?:AS\s+)?(?!SET\b)[a-z_]\w*)?\s+SET\b([\s\S]*?)(?:\bWHERE\b|\bFROM\b|\bRETURNING\b|[`;]|$)/gi;
  for (const m of source.matchAll(update)) {
    if (/(^|[\s,.])status\s*=/i.test(m[1] ?? '')) found.push({ line: lineOf(source, m.index), text: 'SQL update of calls.status' });
  }
  for (const m of source.matchAll(/\bINSERT\s+INTO\s+calls\s*\(([^)]*)\)/gi)) {
    if (/\bstatus\b/i.test(m[1] ?? '')) found.push({ line: lineOf(source, m.index), text: 'SQL insert of calls.status' });
  }
  return found;
}

/** Every write of `calls.status` in this TypeScript source. */
export function callStatusWrites(source: string): StatusWrite[] {
  return [...knexWrites(source), ...sqlWrites(source)].sort((a, b) => a.line - b.line);
}

function tsFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : tsFiles(rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

/** The writes outside the calls module's transitions, as `file:line: what` lines. */
export function violations(): string[] {
  return SCANNED.flatMap(tsFiles)
    .filter((file) => !ALLOWED.some((allowed) => allowed.test(file)))
    .flatMap((file) => callStatusWrites(readFileSync(path.join(ROOT, file), 'utf8')).map((w) => `${file}:${w.line}: ${w.text}`));
}

function main(): number {
  const found = violations();
  for (const v of found) console.error(`${v} — only shared/calls/transitions.ts writes calls.status`);
  return found.length === 0 ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) process.exitCode = main();
