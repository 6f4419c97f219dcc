/**
 * The SQL functions a paid call runs, one file each in this folder: the current text of each (shared/db/sql-functions.ts
 * explains the form; the migrator applies what the database does not hold).
 *   holon_admit_one, holon_admit_batch   admission: the call's row and its reservation in one statement
 *   holon_reserve                        a reservation inside a transaction (a call that redeems an approval or
 *                                        reserves from a parent hold)
 *   holon_settle_shared                  a settlement's shared rows (mandates, parent hold, balances)
 *   holon_settle_batch                   the shared rows of a batch of top-level settlements
 *   holon_log_append                     the receipts' transparency log
 *   holon_lease_take, holon_lease_close, holon_lease_return, holon_admit_leased, holon_admit_tail
 *                                        budget leases (docs/ledger.md, "Budget leases"): a slice taken once,
 *                                        calls carved from it, returned; the per-call path that reclaims them;
 *                                        a revoked mandate's leases closed (a trigger)
 */
import { sqlFunctionFiles } from '../../db/sql-functions.js';

export const CALL_SQL_FUNCTIONS = sqlFunctionFiles(import.meta.url, [
  'holon_admit_one',
  'holon_admit_batch',
  'holon_reserve',
  'holon_settle_shared',
  'holon_settle_batch',
  'holon_log_append',
  'holon_lease_close',
  'holon_lease_take',
  'holon_lease_return',
  'holon_admit_leased',
  'holon_admit_tail',
  'holon_lease_revoked',
]);
