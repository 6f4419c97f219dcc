/**
 * The ledger's SQL functions kept as files in this folder (shared/db/sql-functions.ts): `journal_check_entry_balanced`,
 * the deferred trigger that checks at COMMIT that every journal entry balances.
 */
import { sqlFunctionFiles } from '../../db/sql-functions.js';

export const LEDGER_SQL_FUNCTIONS = sqlFunctionFiles(import.meta.url, ['journal_check_entry_balanced']);
