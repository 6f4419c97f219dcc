/**
 * Measured records of agent versions, computed from `call_events` (what the platform observed).
 */
import type { Queryable } from '../db/connect.js';
import { toBigInt } from '../db/connect.js';

export interface MeasuredRecord {
  runs: number;
  successes: number;
  /** Total billed over those runs (in each event's currency; the dev gateway settles in the mandate's). */
  billed: bigint;
}

export const EMPTY_RECORD: MeasuredRecord = { runs: 0, successes: 0, billed: 0n };

export const recordKey = (id: string, version: string): string => `${id}@${version}`;

/** All-time records for the given versions, in one query. Versions without runs get EMPTY_RECORD. */
export async function loadRecords(
  db: Queryable,
  versions: ReadonlyArray<{ id: string; version: string }>,
): Promise<Map<string, MeasuredRecord>> {
  const out = new Map<string, MeasuredRecord>(versions.map((v) => [recordKey(v.id, v.version), EMPTY_RECORD]));
  if (versions.length === 0) return out;
  const r = await db.raw<{ rows: Array<Record<string, unknown>> }>(
    `SELECT agent_id, agent_version, count(*) AS runs, count(*) FILTER (WHERE status = 'succeeded') AS successes, coalesce(sum(cost), 0) AS billed
       FROM call_events
      WHERE (agent_id, agent_version) IN (SELECT * FROM unnest(?::text[], ?::text[]))
      GROUP BY agent_id, agent_version`,
    [versions.map((v) => v.id), versions.map((v) => v.version)],
  );
  for (const row of r.rows) {
    out.set(recordKey(String(row.agent_id), String(row.agent_version)), {
      runs: Number(row.runs),
      successes: Number(row.successes),
      billed: toBigInt(row.billed),
    });
  }
  return out;
}
