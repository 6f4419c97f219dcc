/**
 * Delegation: sub-mandates are issued by agents (their issuer is an agent id, not an account), and a
 * passthrough child's hold is cut from its parent's hold (holds form trees).
 */
import type { Knex } from 'knex';

export const name = '005_delegation';

export const statements = [
  `ALTER TABLE mandates DROP CONSTRAINT mandates_issuer_fkey`,
  `ALTER TABLE holds ADD COLUMN parent_hold_id text REFERENCES holds(id)`,
  `CREATE INDEX holds_parent ON holds (parent_hold_id) WHERE parent_hold_id IS NOT NULL`,
];

export async function up(knex: Knex): Promise<void> {
  for (const sql of statements) await knex.raw(sql);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
