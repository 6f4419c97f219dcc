/** A backup or restore refused for a reason an operator can act on; its message says what and why, in plain words. */
export class BackupError extends Error {
  override name = 'BackupError';
}

/**
 * The database's own words for a failed query, without the statement knex puts in front of them (an INSERT with a
 * batch of rows in it: credentials, key hashes — never printed).
 */
export function databaseMessage(e: unknown): string {
  const err = e as { message?: string; table?: string; constraint?: string };
  const text = String(err.message ?? e);
  const cut = text.lastIndexOf(' - ');
  const own = cut >= 0 ? text.slice(cut + 3) : text;
  const where = [err.table && `table ${err.table}`, err.constraint && `constraint ${err.constraint}`].filter(Boolean).join(', ');
  return where ? `${own} (${where})` : own;
}
