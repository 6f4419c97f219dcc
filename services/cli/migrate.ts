/**
 * `holon migrate [--db DIR] [--json]`: apply the migrations of this release to DATABASE_URL (else the PGlite directory
 * `--db`, created when it does not exist), then exit — for a Kubernetes Job or init container, a compose one-shot, a
 * deploy step. It takes the same advisory lock as every role's own start-up migration (shared/db/migrate.ts), so it
 * may run beside starting roles, or several at once. Exit 0 migrated (or nothing to do), 1 failed (one sentence
 * saying why), 2 misused.
 */
import { parseArgs } from 'node:util';
import { failed } from './backup-output.js';
import { databaseTarget, openTarget, targetMisuse } from './database-target.js';

const USAGE = 'usage: holon migrate [--db DIR] [--json]  (DATABASE_URL, else the PGlite directory --db)\n';

export async function migrateCommand(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  out: { write(s: string): unknown } = process.stdout,
): Promise<number> {
  const misused = (message: string) => {
    process.stderr.write(`holon migrate: ${message}\n${USAGE}`);
    return 2;
  };
  let values: { db?: string; json?: boolean };
  try {
    ({ values } = parseArgs({ args: argv, options: { db: { type: 'string' }, json: { type: 'boolean', default: false } } }));
  } catch (e) {
    return misused((e as Error).message);
  }
  const misuse = targetMisuse(values.db, env);
  if (misuse) return misused(misuse);
  const target = databaseTarget(values.db, env);
  const started = Date.now();
  try {
    const db = await openTarget(target, false);
    try {
      // This release's migrations, loaded with the database layer (openTarget): a misuse exits without them.
      const { migrate } = await import('../../shared/db/migrate.js');
      const { applied, functions, schema, total } = await migrate(db.knex);
      const seconds = (Date.now() - started) / 1000;
      if (values.json) out.write(`${JSON.stringify({ database: target.label, applied, functions, schema, migrations: total, seconds })}\n`);
      else if (applied.length === 0) out.write(`migrate: ${target.label} is up to date: schema ${schema} (${total} migrations), nothing applied\n`);
      else
        out.write(
          `migrate: ${target.label}: applied ${applied.length} migration${applied.length === 1 ? '' : 's'} in ${seconds.toFixed(2)} s\n` +
            `${applied.map((name) => `  ${name}\n`).join('')}  schema ${schema} (${total} migrations)\n`,
        );
      if (!values.json && functions.length) out.write(`migrate: SQL functions created or replaced from their files: ${functions.join(', ')}\n`);
      return 0;
    } finally {
      await db.close();
    }
  } catch (e) {
    return failed('migrate', e);
  }
}
