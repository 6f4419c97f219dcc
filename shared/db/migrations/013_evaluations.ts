/**
 * Evaluations (spec/evals.md, gateway.md §7 "Evaluation at publish time"): one row per version, capability and run
 * (run 0 at publish time, 1, 2… for the author's re-runs), and one row per case the evaluator judged. A case row is
 * keyed by (evaluation, case): an evaluator killed mid-suite that runs a case again replaces its row, so nothing is
 * counted twice. An evaluator holds a running row by a lease it renews (`holder`, `lease_until`): another one claims
 * it only once the lease ran out (its holder died), so a suite never runs twice at once. Hidden cases keep no detail (`detail` is null): their inputs and expectations stay in the evaluator.
 */
export const name = '013_evaluations';

export const statements = [
  `CREATE TABLE evaluations (
     id            text PRIMARY KEY,
     agent_id      text NOT NULL,
     version       text NOT NULL,
     capability    text NOT NULL,
     run           integer NOT NULL CHECK (run >= 0),
     suite_version integer NOT NULL,
     hidden        boolean NOT NULL,
     status        text NOT NULL CHECK (status IN ('queued', 'running', 'passed', 'failed', 'error')),
     passed        integer NOT NULL DEFAULT 0,
     total         integer NOT NULL,
     threshold     text NOT NULL,
     reason        text,
     attempts      integer NOT NULL DEFAULT 0,
     holder        text,
     lease_until   timestamptz,
     requested_by  text,
     created_at    timestamptz NOT NULL DEFAULT now(),
     started_at    timestamptz,
     finished_at   timestamptz,
     duration_ms   integer,
     UNIQUE (agent_id, version, capability, run),
     FOREIGN KEY (agent_id, version) REFERENCES published_versions (agent_id, version)
   )`,
  `CREATE INDEX evaluations_unfinished ON evaluations (created_at) WHERE status IN ('queued', 'running')`,
  `CREATE TABLE evaluation_cases (
     evaluation_id text NOT NULL REFERENCES evaluations (id),
     case_id       text NOT NULL,
     ordinal       integer NOT NULL,
     passed        boolean NOT NULL,
     duration_ms   integer NOT NULL,
     detail        jsonb,
     judged_at     timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (evaluation_id, case_id)
   )`,
];
