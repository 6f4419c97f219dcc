/**
 * The catalogue's search documents (docs/publishing.md, "Search"): one row per listed agent version, its three
 * weighted parts as text (shared/catalogue/text-search.ts `documentParts`: A the id and capabilities, B the summary,
 * C the description and the strings of the examples, bounded to a few KB) and the tsvector Postgres makes of them,
 * a generated column under a GIN index: a search matches on the index and ranks only the matches. A publish writes
 * into the index directly (fastupdate off): publishes are rare, searches are not.
 *
 * `origin`: `published` rows are written with the version (in the publish's transaction) and deleted with its yank;
 * `shipped` rows are written by the processes that list them (shared/catalogue/search-documents.ts). No foreign key:
 * a shipped version has no row anywhere else. Backups carry the text; the tsvector is made again on restore.
 */
export const name = '022_search_documents';

export const statements = [
  `CREATE TABLE search_documents (
     agent_id  text NOT NULL,
     version   text NOT NULL,
     origin    text NOT NULL CHECK (origin IN ('shipped', 'published')),
     head      text NOT NULL,
     summary   text NOT NULL,
     body      text NOT NULL,
     document  tsvector GENERATED ALWAYS AS (
                 setweight(to_tsvector('english'::regconfig, head), 'A')
                 || setweight(to_tsvector('english'::regconfig, summary), 'B')
                 || setweight(to_tsvector('english'::regconfig, body), 'C')
               ) STORED,
     PRIMARY KEY (agent_id, version)
   )`,
  // fastupdate off: every write goes into the index itself, none waits in a pending list that each search would
  // read through (and that makes the planner's estimate of the index so high that it scans the table instead).
  `CREATE INDEX search_documents_document ON search_documents USING gin (document) WITH (fastupdate = off)`,
];
