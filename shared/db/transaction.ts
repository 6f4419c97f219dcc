import type { Queryable, Tx } from './connect.js';

/** Run `work` in the given transaction, or in a new one when handed the database itself. */
export async function inTransaction<T>(db: Queryable, work: (trx: Tx) => Promise<T>): Promise<T> {
  if (isTransaction(db)) return work(db);
  return db.transaction(work);
}

function isTransaction(db: Queryable): db is Tx {
  return (db as Tx).isTransaction === true;
}
