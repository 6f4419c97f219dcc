/**
 * `holon audit [--db DIR] [--json]`: the ledger audit (shared/ledger/audit.ts, read-only) against DATABASE_URL (or
 * the PGlite directory), for operators' cron jobs. Exit 0 when the books agree, 1 on any discrepancy (each one
 * printed) or when the database cannot be read, 2 misused.
 */
import { parseArgs } from 'node:util';
import { appliedMigrations } from '../../shared/backup/catalog.js';
import { BackupError } from '../../shared/backup/errors.js';
import { failed } from './backup-output.js';
import { databaseTarget, openTarget, targetMisuse } from './database-target.js';

const USAGE = 'usage: holon audit [--db DIR] [--json]  (DATABASE_URL, else the PGlite directory --db)\n';

export async function auditCommand(argv: string[], env: NodeJS.ProcessEnv = process.env, out: { write(s: string): unknown } = process.stdout): Promise<number> {
  let values: { db?: string; json?: boolean };
  try {
    ({ values } = parseArgs({ args: argv, options: { db: { type: 'string' }, json: { type: 'boolean', default: false } } }));
  } catch (e) {
    process.stderr.write(`holon audit: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const misuse = targetMisuse(values.db, env);
  if (misuse) {
    process.stderr.write(`holon audit: ${misuse}\n${USAGE}`);
    return 2;
  }
  const target = databaseTarget(values.db, env);
  try {
    const db = await openTarget(target, true);
    try {
      if (!(await appliedMigrations(db.knex)).length)
        throw new BackupError('the database has no Holon schema (no migration was ever applied): nothing to audit');
      // The ledger audit comes with the database layer: loaded only once there is a database to audit.
      const { audit } = await import('../../shared/ledger/audit.js');
      const report = await audit(db.knex);
      if (values.json) out.write(`${JSON.stringify({ database: target.label, ok: report.ok, problems: report.problems })}\n`);
      else if (report.ok) out.write(`audit ok: ${target.label}: the journal balances, and balances, holds, mandates and receipts agree with it\n`);
      else
        out.write(
          `audit found ${report.problems.length} discrepanc${report.problems.length === 1 ? 'y' : 'ies'} in ${target.label}:\n${report.problems.map((p) => `  - ${p}\n`).join('')}`,
        );
      return report.ok ? 0 : 1;
    } finally {
      await db.close();
    }
  } catch (e) {
    return failed('audit', e);
  }
}
