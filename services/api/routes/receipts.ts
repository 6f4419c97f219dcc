/**
 * Receipts (receipts.md): GET /v0/receipts[?mandate=&since=&until=&status=&agent=&limit=&before=] (trees, newest
 * first, paged), GET /v0/receipts.csv (the same filters, every matching top-level receipt, one row each: the month's
 * export for a spreadsheet), GET /v0/receipts/{id} and GET /v0/receipts/{id}/proof (its inclusion proof in the log).
 * A principal reads only its own receipts (and proofs): those of the mandates it sees, and a human key those of its
 * requests that named no mandate that exists (principal.ts `receiptScopeOf`); the dev operator every one.
 */
import { once } from 'node:events';
import { type Request, type Response, Router } from 'express';
import { HolonError } from '../../../shared/core/errors.js';
import { csvHeader, csvRecord, type CsvCell } from '../../../shared/core/csv.js';
import { formatAmount } from '../../../shared/core/money.js';
import type { Instant } from '../../../shared/core/timestamps.js';
import type { ServiceContext } from '../../../shared/context.js';
import {
  eachReceiptLine,
  listReceipts,
  loadOwnedReceiptTree,
  RECEIPT_STATUSES,
  type ReceiptFilter,
  type ReceiptLine,
  type ReceiptScope,
} from '../../../shared/receipts/store.js';
import { assertSeesMandate, ownOrNotFound, receiptListScope, receiptScopeOf, requireKind } from '../principal.js';
import { queryAgent, queryPeriod, queryStatus, queryString } from '../query.js';
import { defineOperations, mount, type QuerySpec } from '../openapi/operations.js';
import { exact, failure, RECEIPT, RECEIPT_PROOF } from '../openapi/schemas.js';
import { querySize } from './log.js';
import { receiptProof } from '../receipt-proof.js';

/** The filters GET /v0/receipts and GET /v0/receipts.csv share. */
const FILTERS: Readonly<Record<string, QuerySpec>> = {
  mandate: { description: 'Only this mandate’s (404 if it is not yours)', schema: { type: 'string', maxLength: 300 } },
  since: {
    description: 'Only receipts written at or after this instant (RFC 3339 with a time zone, on `created_at`)',
    schema: { type: 'string', format: 'date-time', examples: ['2026-03-01T00:00:00Z'] },
  },
  until: {
    description: 'Only receipts written before this instant (exclusive; not before `since`)',
    schema: { type: 'string', format: 'date-time', examples: ['2026-04-01T00:00:00Z'] },
  },
  status: { description: 'Only receipts with this status', schema: { type: 'string', enum: [...RECEIPT_STATUSES] } },
  agent: {
    description: '`ns/name`: every version of the agent; `ns/name@version`: exactly that version',
    schema: { type: 'string', maxLength: 200, examples: ['examples/echo-upper', 'examples/echo-upper@1.0.0'] },
  },
};

const BAD_QUERY = failure('A bad query parameter, named in the message (a malformed timestamp, `until` before `since`, an unknown status…)', 'invalid_request');

/** The CSV's columns, in order (docs/hosted.md "Reconciling a month through the API"). */
export const RECEIPT_CSV_COLUMNS = [
  'id',
  'created_at',
  'mandate',
  'agent',
  'status',
  'error',
  'billed',
  'cost_own',
  'cost_downstream',
  'cost_total',
  'currency',
  'worst_case',
  'duration_ms',
  'approval',
  'children',
] as const;

export const receiptOperations = defineOperations({
  list: {
    id: 'listReceipts',
    method: 'get',
    path: '/v0/receipts',
    tag: 'receipts',
    auth: ['human', 'agent'],
    summary: 'Receipt trees, newest first, paged; filtered by mandate, period, status and agent',
    description:
      'Top-level receipts (children inline). A human key reads the receipts of the mandates it issued and of its own requests that named a mandate that does not exist, an agent key those of its mandate. The filters combine; a page’s `next` passed as `before` gives the next (older) page within the same filters.',
    query: {
      ...FILTERS,
      limit: { description: '1 to 200 (default 50)', schema: { type: 'integer', minimum: 1, maximum: 200 } },
      before: { description: 'The `next` of the previous page: the receipts after it (older)', schema: { type: 'string', maxLength: 200 } },
    },
    responses: {
      200: {
        description: 'A page of receipts',
        schema: exact(
          'Receipts',
          {
            receipts: { type: 'array', items: RECEIPT },
            next: { type: 'string', description: 'The last receipt’s id, when there are more: pass it as `before`. Absent on the last page.' },
          },
          ['receipts'],
        ),
      },
      400: BAD_QUERY,
      401: failure('No key', 'unauthorized'),
      404: failure('No such mandate of yours', 'not_found'),
    },
  },
  csv: {
    id: 'exportReceipts',
    method: 'get',
    path: '/v0/receipts.csv',
    tag: 'receipts',
    auth: ['human', 'agent'],
    summary: 'Every matching top-level receipt as CSV, newest first: a month’s export',
    description: `The filters of GET /v0/receipts, no paging. RFC 4180, a header row, then one row per top-level receipt: ${RECEIPT_CSV_COLUMNS.map((c) => `\`${c}\``).join(', ')} (\`children\`: the number of its direct children). Amounts are decimal strings; a text cell starting with = + - @, a tab or CR is prefixed with a single quote (CSV injection).`,
    query: FILTERS,
    responses: {
      200: {
        description: 'The receipts, as an attachment',
        contentType: 'text/csv; charset=utf-8',
        schema: { type: 'string' },
        example: `${RECEIPT_CSV_COLUMNS.join(',')}\r\nr_1,2026-03-02T10:00:00.000Z,alice/work,examples/echo-upper@1.0.0,succeeded,,true,0.01,0.00,0.01,EUR,0.01,12,,0\r\n`,
        headers: { 'Content-Disposition': 'attachment; filename="holon-receipts-….csv"' },
      },
      400: BAD_QUERY,
      401: failure('No key', 'unauthorized'),
      404: failure('No such mandate of yours', 'not_found'),
    },
  },
  read: {
    id: 'readReceipt',
    method: 'get',
    path: '/v0/receipts/{id}',
    tag: 'receipts',
    auth: ['human', 'agent'],
    summary: 'One receipt tree',
    params: { id: { description: 'The receipt id', example: 'r4' } },
    responses: {
      200: { description: 'The receipt', schema: RECEIPT },
      401: failure('No key', 'unauthorized'),
      404: failure('No such receipt of yours', 'not_found'),
    },
  },
  proof: {
    id: 'readReceiptProof',
    method: 'get',
    path: '/v0/receipts/{id}/proof',
    tag: 'receipts',
    auth: ['human', 'agent'],
    summary: 'A receipt’s place in the log and its inclusion proof against a signed checkpoint',
    description:
      'Against the checkpoint of `checkpoint` leaves when given (one the gateway signed), else against the newest checkpoint — signed on the spot when none covers the receipt yet. Verify it as docs/receipts.md says, or with `holon verify`.',
    params: { id: { description: 'The receipt id', example: 'r4' } },
    query: { checkpoint: { description: 'The size of a signed checkpoint to prove against', schema: { type: 'integer', minimum: 1 } } },
    responses: {
      200: { description: 'The proof', schema: RECEIPT_PROOF },
      400: failure('checkpoint is not a size, names no signed checkpoint, or one too small to hold the receipt', 'invalid_request'),
      401: failure('No key', 'unauthorized'),
      404: failure('No such receipt of yours, or one written before receipts were logged', 'not_found'),
    },
  },
});

/** The principal's scope and the filters of the query; 404 for a mandate it does not see. */
function readFilters(req: Request, res: Response): { scope: ReceiptScope; filter: ReceiptFilter; period: { since?: Instant; until?: Instant } } {
  const p = requireKind(res, ['operator', 'human', 'agent'], 'read receipts');
  const mandate = queryString(req, 'mandate', 300);
  const period = queryPeriod(req);
  const status = queryStatus(req);
  const agent = queryAgent(req);
  if (mandate !== undefined) assertSeesMandate(p, mandate, `there is no mandate ${mandate}`);
  // An agent key lists its mandate's receipts; a human key its own (the mandates they issued, and the requests they
  // sent that named no mandate that exists); the operator all: the rule `readable` reads one by (receiptScopeOf).
  const scope = receiptListScope(p);
  const filter: ReceiptFilter = {
    ...(mandate !== undefined && p.kind !== 'agent' ? { mandate } : {}),
    ...(period.since ? { since: period.since.iso } : {}),
    ...(period.until ? { until: period.until.iso } : {}),
    ...(status ? { status } : {}),
    ...(agent ? { agent } : {}),
  };
  return { scope, filter, period };
}

const text = (v: string | null): CsvCell => (v === null ? null : { text: v });
const plain = (v: string | null): CsvCell => (v === null ? null : { plain: v });

/** One CSV row: what a caller or an author could have written is a text cell (prefixed against formulas). */
function csvRow(r: ReceiptLine): string {
  return csvRecord([
    plain(r.id),
    plain(r.createdAt),
    text(r.mandate),
    text(r.agent),
    plain(r.status),
    text(r.error),
    plain(String(r.billed)),
    plain(formatAmount(r.costOwn)),
    plain(formatAmount(r.costDownstream)),
    plain(formatAmount(r.costTotal)),
    text(r.currency),
    plain(r.worstCase === null ? null : formatAmount(r.worstCase)),
    plain(r.durationMs === null ? null : String(r.durationMs)),
    text(r.approval),
    plain(String(r.children)),
  ]);
}

/** `holon-receipts[-from-20260301T000000Z][-to-20260401T000000Z].csv`: only [0-9A-Za-z-] around the fixed parts. */
function csvFilename(period: { since?: Instant; until?: Instant }): string {
  const compact = (i: Instant) => i.iso.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return (
    ['holon-receipts', ...(period.since ? [`from-${compact(period.since)}`] : []), ...(period.until ? [`to-${compact(period.until)}`] : [])].join('-') + '.csv'
  );
}

/** Write and wait while the socket's buffer is full; false once the client has gone. */
async function write(res: Response, chunk: string): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(chunk)) return true;
  await Promise.race([once(res, 'drain'), once(res, 'close')]);
  return !res.destroyed;
}

export function receiptRoutes(ctx: ServiceContext): Router {
  const router = Router();

  mount(router, receiptOperations.list, async (req, res) => {
    const { scope, filter } = readFilters(req, res);
    const limitRaw = queryString(req, 'limit', 10) ?? '50';
    const limit = Number(limitRaw);
    if (!/^[0-9]+$/.test(limitRaw) || limit < 1 || limit > 200) {
      throw new HolonError('invalid_request', 'limit must be an integer from 1 to 200', [{ path: 'query.limit', message: 'must be 1 to 200' }]);
    }
    const before = queryString(req, 'before', 200);
    res.json(await listReceipts(ctx.db, { scope, filter, limit, ...(before !== undefined ? { before } : {}) }));
  });

  // `/v0/receipts.csv` and `/v0/receipts/{id}` cannot match each other's URLs ('.' is not '/'); the export is mounted
  // first all the same, so that no later pattern for receipts can take it.
  mount(router, receiptOperations.csv, async (req, res) => {
    const { scope, filter, period } = readFilters(req, res);
    const pages = eachReceiptLine(ctx.db, { scope, filter, pageSize: 500 });
    // The first page is read before anything is sent: a failure there is still an ordinary error answer.
    let page = await pages.next();
    res.status(200).set({
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="${csvFilename(period)}"`,
      'Cache-Control': 'private, no-store',
      'X-Content-Type-Options': 'nosniff',
    });
    try {
      let chunk = csvHeader(RECEIPT_CSV_COLUMNS);
      while (!page.done) {
        chunk += page.value.map(csvRow).join('');
        if (!(await write(res, chunk))) {
          await pages.return(undefined);
          return;
        }
        chunk = '';
        page = await pages.next();
      }
      res.end(chunk);
    } catch (err) {
      // Rows already went out: the answer cannot become an error any more, so it is cut short (no final CRLF of a
      // complete file) and the failure logged.
      ctx.log.error({ err: { message: (err as Error)?.message, name: (err as Error)?.name } }, 'the receipts export failed while streaming');
      res.destroy();
    }
  });

  /** The receipt tree of `/v0/receipts/{id}…`, when the principal may read it: 404 otherwise, as for no receipt. */
  const readable = async (req: Request, res: Response) => {
    const p = requireKind(res, ['operator', 'human', 'agent'], 'read receipts');
    const id = String(req.params.id);
    return ownOrNotFound(receiptScopeOf(p), await loadOwnedReceiptTree(ctx.db, id), (r) => r.owner, `there is no receipt ${id.slice(0, 100)}`).receipt;
  };

  mount(router, receiptOperations.read, async (req, res) => {
    res.json(await readable(req, res));
  });

  mount(router, receiptOperations.proof, async (req, res) => {
    const receipt = await readable(req, res);
    res.json(await receiptProof(ctx, receipt, querySize(req, 'checkpoint', false)));
  });

  return router;
}
