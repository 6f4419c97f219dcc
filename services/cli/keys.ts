/**
 * `holon keys rotate [--db DIR] [--at TIME] [--json]`: replace the gateway's signing key (docs/receipts.md
 * "Rotation"); what the old key signed keeps verifying, since the key set lists it with the time it stopped signing.
 *
 * - HOLON_SIGNING_KEY set: prints a new private JWK for HOLON_SIGNING_KEY and the HOLON_RETIRED_KEYS value to set
 *   with it — the old key's public half with `retired_at` (`--at`, default now: the time every process runs the new
 *   key; what the old key signs after it would not verify) — after the keys HOLON_RETIRED_KEYS lists already.
 * - Otherwise, a dev gateway's key file beside the PGlite directory (`--db DIR`, HOLON_DB, default `.holon/db`): the
 *   file gets a new key and the database records the old one as retired now; the gateway must be stopped (PGlite is
 *   one process at a time) and signs with the new key from its next start.
 *
 * Exit 0 rotated, 1 when it could not be done (saying why), 2 misused.
 */
import { parseArgs } from 'node:util';
import { parseTimestamp } from '../../shared/core/timestamps.js';
import { ConfigError } from '../../shared/platform/config.js';
import { valueIn } from '../../shared/platform/settings/declare.js';
import { SETTINGS } from '../../shared/platform/settings/index.js';
import { parseRetiredKeys } from '../../shared/signing/key-set.js';
import { keyFileOf, keyOfSetting, newPrivateJwk, rotateKeyFile } from '../../shared/signing/keys.js';
import { failed } from './backup-output.js';
import { databaseTarget, openTarget } from './database-target.js';

const USAGE = 'usage: holon keys rotate [--db DIR] [--at TIME] [--json]\n';

export async function keysCommand(argv: string[], env: NodeJS.ProcessEnv = process.env, out: { write(s: string): unknown } = process.stdout): Promise<number> {
  let values: { db?: string; at?: string; json?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: { db: { type: 'string' }, at: { type: 'string' }, json: { type: 'boolean', default: false } },
      allowPositionals: true,
    }));
  } catch (e) {
    process.stderr.write(`holon keys: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (positionals.length !== 1 || positionals[0] !== 'rotate') {
    process.stderr.write(`holon keys: the one subcommand is rotate\n${USAGE}`);
    return 2;
  }
  const at = values.at === undefined ? { ok: true as const, instant: { iso: new Date().toISOString() } } : parseTimestamp(values.at);
  if (!at.ok) {
    process.stderr.write(`holon keys rotate: --at must be an RFC 3339 time with a time zone, such as 2026-03-01T00:00:00Z\n`);
    return 2;
  }
  try {
    const setting = valueIn(SETTINGS.signingKey, env);
    if (setting)
      return await rotateSetting(setting, valueIn(SETTINGS.retiredKeys, env), new Date(at.instant.iso).toISOString(), { json: values.json === true, out });
    if (env.DATABASE_URL?.trim()) {
      process.stderr.write('holon keys rotate: on Postgres every process needs the same key in HOLON_SIGNING_KEY; set it (then rotate with this command)\n');
      return 2;
    }
    if (values.at !== undefined) {
      process.stderr.write('holon keys rotate: --at is for HOLON_SIGNING_KEY; a dev key file is rotated now\n');
      return 2;
    }
    return await rotateFile(values.db, env, { json: values.json === true, out });
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`holon keys rotate: ${e.message}\n`);
      return 1;
    }
    return failed('keys rotate', e);
  }
}

async function rotateSetting(
  setting: string,
  retired: string | undefined,
  at: string,
  o: { json: boolean; out: { write(s: string): unknown } },
): Promise<number> {
  const old = keyOfSetting(setting);
  const listed = await parseRetiredKeys(retired);
  const { text, key } = newPrivateJwk();
  const retiredKeys = JSON.stringify([...listed.map(({ kty, crv, x, retired_at }) => ({ kty, crv, x, retired_at })), { ...old.publicJwk, retired_at: at }]);
  if (o.json)
    o.out.write(
      `${JSON.stringify({ command: 'keys rotate', kid: key.kid, retired: old.kid, retired_at: at, HOLON_SIGNING_KEY: text, HOLON_RETIRED_KEYS: retiredKeys })}\n`,
    );
  else
    o.out.write(
      `# a new signing key (${key.kid}); ${old.kid} retires at ${at}. Set both, in every process, before that time:\n` +
        `HOLON_SIGNING_KEY='${text}'\nHOLON_RETIRED_KEYS='${retiredKeys}'\n`,
    );
  return 0;
}

async function rotateFile(dbOption: string | undefined, env: NodeJS.ProcessEnv, o: { json: boolean; out: { write(s: string): unknown } }): Promise<number> {
  const target = databaseTarget(dbOption, env);
  // The database first: a running gateway holds it, and then nothing is rotated.
  const db = await openTarget(target, true);
  try {
    const { old, next } = rotateKeyFile(keyFileOf(target.dir!));
    const now = new Date();
    const { registerSigningKey, retireStoredKey } = await import('../../shared/signing/key-store.js');
    await registerSigningKey(db.knex, old);
    await retireStoredKey(db.knex, old.kid, now);
    if (o.json)
      o.out.write(`${JSON.stringify({ command: 'keys rotate', kid: next.kid, retired: old.kid, retired_at: now.toISOString(), database: target.label })}\n`);
    else
      o.out.write(`signing key rotated: ${next.kid} signs from the next start; ${old.kid} retired at ${now.toISOString()} (still in /.well-known/jwks.json)\n`);
    return 0;
  } finally {
    await db.close();
  }
}
