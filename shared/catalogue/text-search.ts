/**
 * Full-text search of the catalogue (GET /v0/agents?q=, MCP search_agents): Postgres's own text search
 * (`to_tsvector('english', …)`, `plainto_tsquery`, `ts_rank`), the same SQL on Postgres and on PGlite.
 *
 * The document. Each listed version is one tsvector in three weights:
 *   A  the id (so its namespace and name) and the capabilities
 *   B  the summary
 *   C  the description (its first 20 000 characters) and the strings of `interface.examples` (8 000 characters)
 * ranked with ts_rank's weights {D 0.1, C 0.2, B 0.4, A 1.0}, without length normalisation (a long description
 * does not push an agent down), rounded to 6 decimals so that equally relevant versions tie exactly and the
 * caller's tie-break (cost per successful run) decides between them.
 *
 * The query. ANY of its words: the query is cut into words at white space (at most 32 distinct, case folded), each
 * word is read by `plainto_tsquery('english', …)` (stemmed, stop words dropped, every operator character of the
 * tsquery syntax only a separator, so nothing the caller types is ever parsed as a tsquery), and the words are
 * OR-ed. A compound word keeps its parts together (`word-count` is `'word-count' & 'word' & 'count'`). A word
 * that is only stop words or punctuation is dropped; a query of nothing else matches nothing. Both sides go
 * through `searchText` first: `/` and `.` become spaces, so `examples/word-count` and `text.translate` are words
 * rather than one "file" or "host" token of Postgres's parser, and characters `text` cannot hold (NUL, lone
 * surrogates, control characters) are spaces too: no query can fail in Postgres.
 *
 * Where the documents are. The catalogue is the registry (shared/registry), in every process's memory: shipped
 * agents read from that process's directories (which differ between processes, less HOLON_EXCLUDE) and published
 * versions listed from `published_versions`, hidden when yanked. The registry already decides what is listed, so
 * the candidates come from it, every filter applied (capability, listed, yanked, excluded), and are ranked in ONE
 * query over their documents passed as values (`unnest`). No table of documents: nothing to keep in step with
 * directories, publishes, yanks and exclusions across processes, no migration, and the same answers on both
 * backends by construction. Each process asks its database once for a version's document (a version never
 * changes) and keeps it as text; a search sends the candidates' documents and the words. That is linear in the
 * catalogue: about 100 ms for 2 000 versions with long descriptions, a few ms for today's. Past a few thousand
 * listed versions, the next step is a table of published documents with a GIN index (shipped ones stay values).
 */
import type { Queryable } from '../db/connect.js';
import type { Manifest } from '../core/manifest/types.js';
import type { AgentVersion } from '../registry/agent-version.js';

/** The longest query, in characters (REST answers 400 beyond, MCP refuses the argument). */
export const MAX_QUERY_LENGTH = 500;
/** Distinct words of a query that are searched; the rest are ignored. */
export const MAX_QUERY_WORDS = 32;
const MAX_DESCRIPTION = 20_000;
const MAX_EXAMPLES = 8_000;

// NUL and the other control characters, a high surrogate not followed by a low one, a low one not preceded by a high one.
const UNREADABLE = /[\u0000-\u001f\u007f-\u009f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const JOINERS = /[/.]/g;

/** Text as the search reads it, documents and queries alike (see the header). Pure. */
export function searchText(s: string): string {
  return s.replace(UNREADABLE, ' ').replace(JOINERS, ' ');
}

/** The words of a query: split at white space, case folded, distinct, at most MAX_QUERY_WORDS. Pure. */
export function queryWords(q: string): string[] {
  const words = new Set<string>();
  for (const w of searchText(q).toLowerCase().split(/\s+/)) {
    if (w === '') continue;
    words.add(w);
    if (words.size === MAX_QUERY_WORDS) break;
  }
  return [...words];
}

/** The strings of the examples (inputs, outputs, error codes), in order, up to `max` characters. */
function exampleStrings(examples: Manifest['interface']['examples'], max: number): string {
  const out: string[] = [];
  let length = 0;
  const stack: unknown[] = [...examples].reverse();
  while (stack.length > 0 && length < max) {
    const v = stack.pop();
    if (typeof v === 'string') {
      out.push(v);
      length += v.length + 1;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    } else if (v !== null && typeof v === 'object') {
      const values = Object.values(v);
      for (let i = values.length - 1; i >= 0; i--) stack.push(values[i]);
    }
  }
  return out.join(' ').slice(0, max);
}

/** The three weighted parts of a version's document: A (id, capabilities), B (summary), C (description, examples). Pure. */
export function documentParts(m: Manifest): [string, string, string] {
  const a = [m.id, ...m.capabilities].join(' ');
  const c = `${(m.description ?? '').slice(0, MAX_DESCRIPTION)} ${exampleStrings(m.interface.examples, MAX_EXAMPLES)}`;
  return [searchText(a), searchText(m.summary), searchText(c)];
}

export interface TextMatch {
  /** ts_rank of the version's document for the query, 6 decimals; 0 for an exact id the words did not match. */
  rank: number;
  /** The query, trimmed and case folded, is the agent's id. */
  exact: boolean;
}

/** Documents Postgres made, as tsvector text, per database handle (two backends may stem differently) and manifest. */
const documents = new WeakMap<object, WeakMap<Manifest, string>>();

async function documentsOf(db: Queryable, agents: readonly AgentVersion[]): Promise<string[]> {
  let known = documents.get(db);
  if (!known) {
    known = new WeakMap();
    documents.set(db, known);
  }
  const missing = [...new Set(agents.map((a) => a.manifest).filter((m) => !known.has(m)))];
  if (missing.length > 0) {
    const parts = missing.map(documentParts);
    const r = await db.raw<{ rows: Array<{ document: string }> }>(
      `SELECT (setweight(to_tsvector('english', d.a), 'A') || setweight(to_tsvector('english', d.b), 'B')
                || setweight(to_tsvector('english', d.c), 'C'))::text AS document
         FROM unnest(?::text[], ?::text[], ?::text[]) WITH ORDINALITY AS d(a, b, c, n)
        ORDER BY d.n`,
      [parts.map((p) => p[0]), parts.map((p) => p[1]), parts.map((p) => p[2])],
    );
    for (const [i, m] of missing.entries()) known.set(m, r.rows[i]!.document);
  }
  return agents.map((a) => known.get(a.manifest)!);
}

/**
 * The versions of `agents` that match any word of `q`, each with its relevance; the others are absent. One query
 * (plus one, the first time this process sees a version). `q` is at most MAX_QUERY_LENGTH characters (the callers
 * check it).
 */
export async function matchText(db: Queryable, agents: readonly AgentVersion[], q: string): Promise<Map<AgentVersion, TextMatch>> {
  const out = new Map<AgentVersion, TextMatch>();
  const exactId = q.trim().toLowerCase();
  const words = queryWords(q);
  if (agents.length === 0) return out;
  if (words.length > 0) {
    const docs = await documentsOf(db, agents);
    // Words without a lexeme (stop words, punctuation) are left out before plainto_tsquery reads them; the others
    // are OR-ed as tsquery text, which is exactly what plainto_tsquery made (no caller text is parsed as a tsquery).
    const r = await db.raw<{ rows: Array<{ n: number; rank: string | number }> }>(
      `WITH query AS (
         SELECT string_agg('(' || plainto_tsquery('english', w)::text || ')', ' | ' ORDER BY i)::tsquery AS q
           FROM unnest(?::text[]) WITH ORDINALITY AS words(w, i)
          WHERE length(to_tsvector('english', w)) > 0
       )
       SELECT d.n::int AS n, round(ts_rank('{0.1, 0.2, 0.4, 1.0}'::float4[], d.document, query.q)::numeric, 6) AS rank
         FROM unnest(?::tsvector[]) WITH ORDINALITY AS d(document, n), query
        WHERE d.document @@ query.q`,
      [words, docs],
    );
    for (const row of r.rows) {
      const agent = agents[Number(row.n) - 1]!;
      out.set(agent, { rank: Number(row.rank), exact: agent.manifest.id === exactId });
    }
  }
  // The agent named exactly is found whatever its words (an id of stop words still finds its agent).
  for (const agent of agents) if (agent.manifest.id === exactId && !out.has(agent)) out.set(agent, { rank: 0, exact: true });
  return out;
}

/**
 * Most relevant first: the agent whose id is the query, then by rank (descending); `then` orders equally relevant
 * ones (the callers: cost per successful run, then the order they came in). For Array.prototype.sort (stable).
 */
export function byRelevance<T>(matches: ReadonlyMap<AgentVersion, TextMatch>, agentOf: (t: T) => AgentVersion, then: (a: T, b: T) => number = () => 0) {
  return (a: T, b: T): number => {
    const ma = matches.get(agentOf(a));
    const mb = matches.get(agentOf(b));
    const ea = ma?.exact ? 1 : 0;
    const eb = mb?.exact ? 1 : 0;
    if (ea !== eb) return eb - ea;
    const ra = ma?.rank ?? 0;
    const rb = mb?.rank ?? 0;
    if (ra !== rb) return rb - ra;
    return then(a, b);
  };
}
