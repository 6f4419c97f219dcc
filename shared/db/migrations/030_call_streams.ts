/**
 * Calls that stream and ask (docs/lifecycle.md, "A call's events").
 * - `call_stream_events`: the events a running call appended — `progress`, `output.chunk`, `input_required`,
 *   `input_provided` — numbered per call. A row holds no content: a chunk's data, a progress message, a question and
 *   its answer wait in the ephemeral store under the output's TTL rules. `units` is the cumulative count a chunk
 *   reported; `chunk` numbers an `output.chunk` among the chunks (from 0), and names the question an
 *   `input_provided` answers; `answer_ref` is set once, by the one answer a question takes (the answer's key in the store).
 *   `queued`, `running` and `completed` are not rows: they are read from the call row and its receipt.
 * - `receipts.stream`: what a streamed (or asking) call delivered and how it ended, signed with the receipt.
 * - `webhook_deliveries.event`, `.question`: a call with a `callback_url` gets a delivery for each question it asks
 *   (`call.input_required`, its question's id) besides its one `call.completed` (question 0): one per call, event and
 *   question.
 */
export const name = '030_call_streams';

export const statements = [
  `CREATE TABLE call_stream_events (
     call_id    text NOT NULL,
     seq        integer NOT NULL CHECK (seq > 2),
     kind       text NOT NULL CHECK (kind IN ('progress', 'output.chunk', 'input_required', 'input_provided')),
     chunk      integer CHECK (chunk >= 0),
     units      bigint CHECK (units >= 0),
     fraction   double precision CHECK (fraction >= 0 AND fraction <= 1),
     answer_ref text,
     created_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (call_id, seq)
   )`,
  `CREATE INDEX call_stream_events_created ON call_stream_events (created_at)`,
  `ALTER TABLE receipts ADD COLUMN stream jsonb`,
  `ALTER TABLE webhook_deliveries ADD COLUMN event text NOT NULL DEFAULT 'call.completed' CHECK (event IN ('call.completed', 'call.input_required'))`,
  `ALTER TABLE webhook_deliveries ADD COLUMN question integer NOT NULL DEFAULT 0 CHECK (question >= 0)`,
  `ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_call_id_key`,
  `CREATE UNIQUE INDEX webhook_deliveries_call_event ON webhook_deliveries (call_id, event, question)`,
];
