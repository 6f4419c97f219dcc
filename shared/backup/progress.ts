/** Progress of a backup or a restore, reported after every batch of rows (for a terminal's progress bar). */
interface Progress {
  table: string;
  tablesDone: number;
  tablesTotal: number;
  rowsDone: number;
  rowsTotal: number;
  bytes: number;
}

export type OnProgress = (p: Progress) => void;

/** What a finished backup or restore did: the summary the CLI prints. */
export interface Summary {
  schema: string[];
  tables: Record<string, number>;
  rows: number;
  sequences: number;
  bytes: number;
  seconds: number;
}
