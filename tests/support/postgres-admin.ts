/** Creating and dropping whole databases on the test Postgres server. */
import pg from 'pg';

export function databaseUrlFor(baseUrl: string, database: string): string {
  const u = new URL(baseUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

async function withAdmin<T>(baseUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const SAFE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function quoteDatabaseName(name: string): string {
  if (!SAFE_NAME.test(name)) throw new Error(`unsafe database name ${name}`);
  return `"${name}"`;
}

export async function createDatabase(baseUrl: string, name: string, template?: string): Promise<void> {
  await withAdmin(baseUrl, async (c) => {
    const sql = `CREATE DATABASE ${quoteDatabaseName(name)}${template ? ` TEMPLATE ${quoteDatabaseName(template)}` : ''}`;
    // Two clones of one template at the same instant can collide ("source database is being accessed"): retry.
    for (let attempt = 0; ; attempt++) {
      try {
        await c.query(sql);
        return;
      } catch (e) {
        if (attempt >= 20 || !/being accessed by other users/.test((e as Error).message)) throw e;
        await new Promise((r) => setTimeout(r, 50 + attempt * 25));
      }
    }
  });
}

export async function dropDatabase(baseUrl: string, name: string): Promise<void> {
  await withAdmin(baseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteDatabaseName(name)} WITH (FORCE)`));
}

export async function dropDatabasesLike(baseUrl: string, prefix: string): Promise<void> {
  const names = await withAdmin(baseUrl, async (c) => {
    const r = await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, [prefix]);
    return r.rows.map((row) => row.datname);
  });
  for (const n of names) await dropDatabase(baseUrl, n);
}
