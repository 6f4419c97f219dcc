/**
 * Delegation: sub-mandates are issued by agents (their issuer is an agent id, not an account), and a
 * passthrough child's hold is cut from its parent's hold (holds form trees).
 */
export const name = '005_delegation';

export const statements = [
  `ALTER TABLE mandates DROP CONSTRAINT mandates_issuer_fkey`,
  `ALTER TABLE holds ADD COLUMN parent_hold_id text REFERENCES holds(id)`,
  `CREATE INDEX holds_parent ON holds (parent_hold_id) WHERE parent_hold_id IS NOT NULL`,
];
