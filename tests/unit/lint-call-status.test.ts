/**
 * Only the calls module writes `calls.status` (scripts/lint-call-status.ts, run by `npm run lint`): the check finds
 * each way a status is written — knex's update and insert, SQL's UPDATE and INSERT — lets reads and other columns
 * be, and the tree passes it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { callStatusWrites, violations } from '../../scripts/lint-call-status.js';

describe('only the calls module writes calls.status', () => {
  it('finds a knex update or insert that sets status, on one line or several', () => {
    expect(callStatusWrites(`await db('calls').where({ id }).update({ status: 'failed' });`)).toEqual([{ line: 1, text: 'knex update of calls.status' }]);
    const spread = `const q = trx('calls')\n  .whereIn('id', ids)\n  .update({\n    status: trx.raw('x'),\n  });`;
    expect(callStatusWrites(spread)).toEqual([{ line: 1, text: 'knex update of calls.status' }]);
    expect(callStatusWrites(`await trx("calls").insert({ ...row, status: 'queued' });`)).toEqual([{ line: 1, text: 'knex insert of calls.status' }]);
  });

  it('finds SQL that updates or inserts a call status, with or without an alias', () => {
    expect(callStatusWrites("db.raw(`UPDATE calls SET outcome = ?, status = 'settling' WHERE id = ?`)")).toHaveLength(1);
    expect(callStatusWrites("db.raw(`update calls c set status = 'running' where c.id = ?`)")).toHaveLength(1);
    expect(callStatusWrites("db.raw(`INSERT INTO calls (id, status) VALUES (?, 'queued')`)")).toHaveLength(1);
  });

  it('lets reads, conditions on status and other columns be', () => {
    expect(callStatusWrites(`await db('calls').where({ id, status: 'running' }).first();`)).toEqual([]);
    expect(callStatusWrites(`await db('calls').where({ id, status: 'queued' }).update({ sub_mandate_id: sub });`)).toEqual([]);
    expect(callStatusWrites("db.raw(`UPDATE calls SET settle_enqueued_at = now() WHERE status = 'settling'`)")).toEqual([]);
    expect(callStatusWrites('db.raw(`SELECT status FROM calls WHERE id = ?`)')).toEqual([]);
  });

  it('sees every transition of shared/calls/transitions.ts, and no write anywhere else in the tree', () => {
    expect(callStatusWrites(readFileSync('shared/calls/transitions.ts', 'utf8')).length).toBeGreaterThanOrEqual(3);
    expect(violations()).toEqual([]);
  });
});
