/**
 * `holon_admit` goes: no code calls it (admission runs `holon_admit_one` and `holon_admit_batch`). The functions a
 * call runs are kept as files from here on (shared/db/sql-functions.ts): the migrator applies them after the versioned
 * migrations, whenever the database does not hold their text.
 */
export const name = '028_drop_holon_admit';

export const statements = [`DROP FUNCTION IF EXISTS holon_admit(jsonb)`];
