/**
 * The order tables are written and restored in: every table after the tables it references, so each row's
 * foreign keys already exist when it is inserted (the constraints stay on). Ties in alphabetical order, so two
 * backups of one schema list tables alike. Pure.
 */
import { BackupError } from './errors.js';

export interface ForeignKey {
  /** The referencing table. */
  table: string;
  /** The referenced table. */
  references: string;
}

export function tablesInDependencyOrder(tables: readonly string[], keys: readonly ForeignKey[]): string[] {
  const known = new Set(tables);
  const waitingOn = new Map<string, Set<string>>(tables.map((t) => [t, new Set<string>()]));
  for (const k of keys) {
    // A table referencing itself is ordered row by row (parents first), not here.
    if (k.table === k.references || !known.has(k.table) || !known.has(k.references)) continue;
    waitingOn.get(k.table)!.add(k.references);
  }
  const done: string[] = [];
  const left = new Set(tables);
  while (left.size) {
    const ready = [...left].filter((t) => [...waitingOn.get(t)!].every((r) => !left.has(r))).sort();
    if (!ready.length)
      throw new BackupError(`tables reference each other in a cycle (${[...left].sort().join(', ')}): no insert order satisfies their foreign keys`);
    for (const t of ready) {
      done.push(t);
      left.delete(t);
    }
  }
  return done;
}
