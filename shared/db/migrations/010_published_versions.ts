/**
 * Published agent versions (gateway.md §7, "Publishing agents"): the manifest as its author sent it (JSON, validated
 * again when loaded), the author's account and the GitHub repository checked at publish time. A row is never
 * deleted: a yanked version (`yanked_versions`) keeps its number taken, and its calls and fork royalties settle.
 */
export const name = '010_published_versions';

export const statements = [
  `CREATE TABLE published_versions (
     agent_id    text NOT NULL,
     version     text NOT NULL,
     author      text NOT NULL REFERENCES accounts(handle),
     manifest    jsonb NOT NULL,
     repository  text,
     listed_at   timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (agent_id, version)
   )`,
  `CREATE INDEX published_versions_author ON published_versions (author)`,
  `CREATE TRIGGER published_versions_append_only BEFORE UPDATE OR DELETE ON published_versions
     FOR EACH ROW EXECUTE FUNCTION journal_refuse_change()`,
];
