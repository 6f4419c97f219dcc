/**
 * Full-text search of the catalogue (GET /v0/agents?q=, MCP search_agents), its pure half: what Postgres is given to
 * read and the order of the results. Postgres's own text search (`to_tsvector('english', …)`, `plainto_tsquery`,
 * `ts_rank`), the same SQL on Postgres and on PGlite; the documents' table and the query: search-documents.ts.
 *
 * The document. Each listed version is one tsvector in three weights:
 *   A  the id (so its namespace and name) and the capabilities
 *   B  the summary
 *   C  the description (its first 4 000 characters) and the strings of `interface.examples` (2 000 characters)
 * ranked with ts_rank's weights {D 0.1, C 0.2, B 0.4, A 1.0}, without length normalisation (a long description
 * does not push an agent down), rounded to 6 decimals so that equally relevant versions tie exactly and the
 * caller's tie-break (cost per successful run) decides between them. The bounds keep a version's document to a few
 * KB: what one listing costs the index and the ranking of a search that matches it.
 *
 * The query. ANY of its words: the query is cut into words at white space (at most 32 distinct, case folded), each
 * word is read by `plainto_tsquery('english', …)` (stemmed, stop words dropped, every operator character of the
 * tsquery syntax only a separator, so nothing the caller types is ever parsed as a tsquery), and the words are
 * OR-ed. A compound word keeps its parts together (`word-count` is `'word-count' & 'word' & 'count'`). A word
 * that is only stop words or punctuation is dropped; a query of nothing else matches nothing. Both sides go
 * through `searchText` first: `/` and `.` become spaces, so `examples/word-count` and `text.translate` are words
 * rather than one "file" or "host" token of Postgres's parser, and characters `text` cannot hold (NUL, lone
 * surrogates, control characters) are spaces too: no query can fail in Postgres.
 */
import type { Manifest } from '../core/manifest/types.js';
import type { AgentVersion } from '../registry/agent-version.js';

/** The longest query, in characters (REST answers 400 beyond, MCP refuses the argument). */
export const MAX_QUERY_LENGTH = 500;
/** Distinct words of a query that are searched; the rest are ignored. */
export const MAX_QUERY_WORDS = 32;
const MAX_DESCRIPTION = 4_000;
const MAX_EXAMPLES = 2_000;

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
