/**
 * Reconciling a month (spec receipts.md; docs/hosted.md "Reconciling a month through the API"): GET /v0/receipts
 * filtered by period, status and agent, combined with the mandate filter, paging and scoping; GET /v0/receipts.csv
 * (RFC 4180, one row per top-level receipt, newest first, formulas defused, read in pages); bad values a 400 that
 * names the parameter, never a 5xx. Hosted gateway on real Postgres and Redis; the ledger audit runs after each test.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { RECEIPT_CSV_COLUMNS } from '../../services/api/routes/receipts.js';
import { receiptRow } from '../../shared/receipts/store.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { send, signUp, workMandate, type Account } from '../support/hosted.js';
import { GENEROUS_RATE_LIMITS, query } from '../support/http.js';

const RATES = GENEROUS_RATE_LIMITS;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const q = query;
const plusMs = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

interface Receipt {
  id: string;
  mandate: string;
  agent: string | null;
  status: string;
  error?: string;
  billed: boolean;
  cost: { own: string; downstream: string; total: string };
  currency: string | null;
  worst_case: string | null;
  duration_ms: number | null;
  approval: string | null;
  children: Receipt[];
  created_at: string;
}

/** Every page of GET /v0/receipts with these filters, following `next`. */
async function allPages(g: TestGateway, key: string, params: Record<string, string | undefined>, limit: number): Promise<Receipt[]> {
  const out: Receipt[] = [];
  let before: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const r = await send(g.url, 'GET', `/v0/receipts${q({ ...params, limit: String(limit), before })}`, { key });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.receipts.length).toBeLessThanOrEqual(limit);
    out.push(...r.body.receipts);
    if (r.body.next === undefined) return out;
    expect(r.body.next).toBe(r.body.receipts[r.body.receipts.length - 1].id);
    before = r.body.next;
  }
  throw new Error('too many pages');
}

/** RFC 4180: records of fields; quoted fields may hold commas, CR, LF and doubled quotes. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (ch === '"') {
        quoted = false;
        i++;
      } else {
        field += ch;
        i++;
      }
    } else if (ch === '"' && field === '') {
      quoted = true;
      i++;
    } else if (ch === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (ch === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else {
      // a bare CR or LF outside quotes, or a quote inside an unquoted field, breaks RFC 4180
      expect(ch === '\r' || ch === '\n' || ch === '"', `unquoted ${JSON.stringify(ch)} at ${i}`).toBe(false);
      field += ch;
      i++;
    }
  }
  expect(quoted).toBe(false);
  expect(field === '' && record.length === 0, 'the last record ends with CRLF').toBe(true);
  return records;
}

async function csv(g: TestGateway, key: string, params: Record<string, string | undefined>) {
  const res = await fetch(`${g.url}/v0/receipts.csv${q(params)}`, { headers: { authorization: `Bearer ${key}` } });
  const body = await res.text();
  return { status: res.status, headers: res.headers, body, records: res.status === 200 ? parseCsv(body) : [] };
}

async function call(g: TestGateway, key: string, body: Record<string, unknown>): Promise<Receipt> {
  const r = await send(g.url, 'POST', '/v0/calls', { key, body });
  expect(r.body.receipt, JSON.stringify(r.body)).toBeDefined();
  return r.body.receipt;
}

/** A refusal-like receipt written straight into the table (unbilled, costs nothing: the audit stays clean). */
async function insertReceipt(g: TestGateway, id: string, fields: { mandate: string; agent: string; error?: string; at: string; status?: string }) {
  await g.db.knex('receipts').insert({
    ...receiptRow({
      id,
      mandateId: fields.mandate,
      caller: 'someone',
      agent: fields.agent,
      status: (fields.status ?? 'denied') as 'denied',
      errorCode: fields.error ?? null,
      reasons: ['inserted by the test'],
      currency: 'EUR',
    }),
    created_at: fields.at,
  });
}

describe('GET /v0/receipts: since, until, status, agent', () => {
  test('the filters combine with the mandate, paging and scoping; another tenant’s mandate is a 404 and never a row', async () => {
    await useAudited(await startTestGateway({ hosted: true, config: RATES }), async (g) => {
      const alice = await signUp(g.url, 'alice');
      const bob = await signUp(g.url, 'bob');
      const work = await workMandate(g.url, alice, { delegation: { max_depth: 2 }, approval: { agents: ['examples/word-count'] } });
      const bobWork = await workMandate(g.url, bob);
      const echo = (text: unknown, extra: Record<string, unknown> = {}) => ({ agent: 'examples/echo-upper', input: { text }, ...extra });

      // Three periods, a pause between them so that no two share a millisecond.
      const a = [
        await call(g, work.agent, echo('a1')),
        await call(g, work.agent, echo('a2')),
        await call(g, work.agent, { agent: 'examples/flaky', input: { mode: 'declared_billed' } }),
      ];
      await pause(25);
      const b = [
        await call(g, work.agent, echo('b1')),
        await call(g, work.agent, { agent: 'examples/flaky', input: { mode: 'declared_unbilled' } }),
        await call(g, work.agent, echo(5)),
        await call(g, work.agent, echo('b4', { max_cost: '0.001' })),
        await call(g, work.agent, { agent: 'examples/word-count', input: { text: 'a b' } }),
        await call(g, work.agent, { agent: 'fixtures/pipeline', input: { text: 'b6' } }),
      ];
      const bobs = [await call(g, bobWork.agent, echo('bob'))];
      await pause(25);
      const c = [await call(g, work.agent, echo('c1'))];
      expect(b.map((r) => r.status)).toEqual(['succeeded', 'failed', 'rejected_input', 'denied', 'pending_approval', 'succeeded']);
      expect(b[5]!.children).toHaveLength(2);

      const all = await allPages(g, alice.human, {}, 200);
      // Newest first.
      expect(all.map((r) => r.created_at)).toEqual(
        all
          .map((r) => r.created_at)
          .sort()
          .reverse(),
      );
      expect([all[0]!.id, all[all.length - 1]!.id]).toEqual([c[0]!.id, a[0]!.id]);
      expect(new Set(all.map((r) => r.id))).toEqual(new Set([...a, ...b, ...c].map((r) => r.id)));
      const at = (r: Receipt) => all.find((x) => x.id === r.id)!.created_at;
      const b0 = b.map(at).sort()[0]!;
      const c0 = at(c[0]!);
      expect(a.map(at).every((t) => t < b0)).toBe(true);
      expect(b.map(at).every((t) => t >= b0 && t < c0)).toBe(true);
      const ids = (rs: Receipt[]) => rs.map((r) => r.id);
      const inOrder = (rs: Receipt[]) => all.filter((r) => rs.some((x) => x.id === r.id)).map((r) => r.id);
      const list = async (key: string, params: Record<string, string | undefined>) => {
        const r = await send(g.url, 'GET', `/v0/receipts${q({ limit: '200', ...params })}`, { key });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body.receipts as Receipt[];
      };

      // The period: since inclusive, until exclusive, on created_at; newest first.
      expect(ids(await list(alice.human, { since: b0, until: c0 }))).toEqual(inOrder(b));
      expect(ids(await list(alice.human, { since: b0 }))).toEqual(inOrder([...b, ...c]));
      expect(ids(await list(alice.human, { until: b0 }))).toEqual(inOrder(a));
      expect(ids(await list(alice.human, { since: c0, until: c0 }))).toEqual([]);
      // Another way of writing the same instant (an offset, a longer fraction) is the same bound.
      const shifted = new Date(Date.parse(b0) + 2 * 3600_000).toISOString().replace('Z', '000+02:00');
      expect(ids(await list(alice.human, { since: shifted, until: c0 }))).toEqual(inOrder(b));
      // The trees come whole: the pipeline's children inline.
      expect((await list(alice.human, { since: b0, until: c0 })).find((r) => r.id === b[5]!.id)!.children).toHaveLength(2);

      // Status and agent, alone and together with everything else.
      expect(ids(await list(alice.human, { status: 'failed' }))).toEqual(inOrder([a[2]!, b[1]!]));
      expect(ids(await list(alice.human, { status: 'failed', since: b0 }))).toEqual(inOrder([b[1]!]));
      for (const status of ['succeeded', 'failed', 'denied', 'rejected_input', 'pending_approval']) {
        expect(ids(await list(alice.human, { status })), status).toEqual(all.filter((r) => r.status === status).map((r) => r.id));
      }
      const echoes = all.filter((r) => r.agent === 'examples/echo-upper' || r.agent?.startsWith('examples/echo-upper@'));
      expect(echoes.length).toBeGreaterThanOrEqual(6);
      expect(ids(await list(alice.human, { agent: 'examples/echo-upper' }))).toEqual(ids(echoes));
      expect(ids(await list(alice.human, { agent: 'examples/echo-upper@1.0.0' }))).toEqual(ids(all.filter((r) => r.agent === 'examples/echo-upper@1.0.0')));
      expect(ids(await list(alice.human, { agent: 'examples/echo-upper@2.0.0' }))).toEqual([]);
      expect(ids(await list(alice.human, { agent: 'examples/echo' }))).toEqual([]);
      expect(ids(await list(alice.human, { agent: 'fixtures/pipeline' }))).toEqual([b[5]!.id]);
      const combined = { mandate: work.mandate, status: 'succeeded', agent: 'examples/echo-upper', since: b0, until: plusMs(c0, 1) };
      expect(ids(await list(alice.human, combined))).toEqual(inOrder([b[0]!, c[0]!]));

      // Paging within a range and filters: every page follows from the previous page's `next`; nothing is lost or repeated.
      for (const limit of [1, 2, 3]) {
        expect(ids(await allPages(g, alice.human, { since: b0, until: c0 }, limit)), `limit ${limit}`).toEqual(inOrder(b));
        expect(ids(await allPages(g, alice.human, { agent: 'examples/echo-upper', since: a[1]!.created_at }, limit))).toEqual(
          ids(echoes.filter((r) => r.created_at >= at(a[1]!))),
        );
      }

      // Scoping. The mandate's agent key sees the same; the sandbox's key none of it; bob none of it.
      expect(ids(await list(work.agent, { since: b0, until: c0 }))).toEqual(inOrder(b));
      expect(ids(await list(alice.sandboxAgent, { since: b0 }))).toEqual([]);
      expect((await send(g.url, 'GET', `/v0/receipts?mandate=${work.mandate}`, { key: alice.sandboxAgent })).status).toBe(404);
      const bobList = await list(bob.human, { since: b0, until: plusMs(c0, 1) });
      expect(ids(bobList)).toEqual(ids(bobs));
      for (const params of [{ mandate: work.mandate }, { mandate: work.mandate, since: b0 }, { mandate: 'alice/nope' }]) {
        const r = await send(g.url, 'GET', `/v0/receipts${q(params)}`, { key: bob.human });
        expect(r.status).toBe(404);
        expect(r.body.error.code).toBe('not_found');
        expect((await csv(g, bob.human, params)).status).toBe(404);
      }
      // A mandate id in one's own namespace that names no mandate is simply empty (it cannot be anyone else's).
      expect(await list(alice.human, { mandate: 'alice/nope' })).toEqual([]);
      // Alice's receipt id as bob's cursor: refused like any id that is not his page's `next`, telling nothing.
      const stolen = await send(g.url, 'GET', `/v0/receipts${q({ before: b[0]!.id })}`, { key: bob.human });
      expect(stolen.status).toBe(400);
      expect(stolen.body.error).toMatchObject({ code: 'invalid_request', problems: [{ path: 'query.before' }] });
      expect(JSON.stringify(stolen.body)).not.toContain('alice');
      expect((await send(g.url, 'GET', `/v0/receipts${q({ before: 'r_nothing' })}`, { key: alice.human })).status).toBe(400);
      const bobCsv = await csv(g, bob.human, {});
      expect(bobCsv.records.slice(1).map((r) => r[0])).toEqual(ids(bobs));
      expect(bobCsv.body).not.toContain('alice');
      // The receipts of a tree's children are not top-level: never a row of their own.
      expect(ids(all)).not.toContain(b[5]!.children[0]!.id);
    });
  });

  test('receipts written at one instant (a settle batch shares now()) page without loss, in the list and the CSV', async () => {
    await useAudited(await startTestGateway({ hosted: true, config: RATES }), async (g) => {
      const alice = await signUp(g.url, 'alice');
      const work = await workMandate(g.url, alice);
      // 1203 receipts at one microsecond-precise instant, and a few on either side of it.
      const instant = '2026-01-15T12:00:00.123456Z';
      const rows = Array.from({ length: 1203 }, (_, i) => ({
        ...receiptRow({ id: `r_same_${String(i).padStart(4, '0')}`, mandateId: work.mandate, agent: 'examples/echo-upper', status: 'denied', currency: 'EUR' }),
        created_at: instant,
      }));
      for (let i = 0; i < rows.length; i += 400) await g.db.knex('receipts').insert(rows.slice(i, i + 400));
      await insertReceipt(g, 'r_before', { mandate: work.mandate, agent: 'examples/echo-upper', at: '2026-01-15T12:00:00.123455Z' });
      await insertReceipt(g, 'r_after', { mandate: work.mandate, agent: 'examples/echo-upper', at: '2026-01-15T12:00:00.123457Z' });
      const period = { since: '2026-01-15T12:00:00.123Z', until: '2026-01-15T12:00:00.124Z' };
      const expected = ['r_after', ...rows.map((_, i) => `r_same_${String(i).padStart(4, '0')}`).reverse(), 'r_before'];
      expect((await allPages(g, alice.human, period, 200)).map((r) => r.id)).toEqual(expected);
      expect((await allPages(g, alice.human, { ...period, status: 'denied', agent: 'examples/echo-upper' }, 7)).length).toBe(expected.length);
      // Microseconds count: the bounds are exact.
      expect((await allPages(g, alice.human, { since: '2026-01-15T12:00:00.123456Z', until: '2026-01-15T12:00:00.123457Z' }, 200)).map((r) => r.id)).toEqual(
        expected.slice(1, -1),
      );
      const out = await csv(g, alice.human, period);
      expect(out.status).toBe(200);
      expect(out.records[0]).toEqual([...RECEIPT_CSV_COLUMNS]);
      expect(out.records.slice(1).map((r) => r[0])).toEqual(expected);
      expect(out.headers.get('content-disposition')).toBe('attachment; filename="holon-receipts-from-20260115T120000Z-to-20260115T120000Z.csv"');
    });
  });
});

describe('GET /v0/receipts.csv', () => {
  test('RFC 4180, a header row, one row per top-level receipt, newest first; formulas defused, amounts as decimal strings', async () => {
    await useAudited(await startTestGateway({ hosted: true, config: RATES }), async (g) => {
      const alice = await signUp(g.url, 'alice');
      const work = await workMandate(g.url, alice, { delegation: { max_depth: 2 } });
      const pipeline = await call(g, work.agent, { agent: 'fixtures/pipeline', input: { text: 'x' } });
      const failed = await call(g, work.agent, { agent: 'examples/flaky', input: { mode: 'declared_billed' } });
      const rejected = await call(g, work.agent, { agent: 'examples/echo-upper', input: { text: 7 } });
      // What an author or a caller could have written, straight into the table: formulas, quotes, commas, newlines.
      const crafted: Array<[string, string, string | undefined]> = [
        ['r_eq', '=HYPERLINK("http://evil.example","x")', undefined],
        ['r_plus', '+1+1', '-2'],
        ['r_minus', '-3,4', '@SUM(A1)'],
        ['r_at', '@cmd', undefined],
        ['r_tab', '\tx', undefined],
        ['r_cr', '\rx', undefined],
        ['r_text', 'plain "quoted", with a comma\nand a newline', 'fine'],
      ];
      for (const [i, [id, agent, error]] of crafted.entries()) {
        await insertReceipt(g, id, { mandate: work.mandate, agent, ...(error ? { error } : {}), at: `2020-01-01T00:00:0${i}.000Z` });
      }
      const all = await allPages(g, alice.human, {}, 200);

      const out = await csv(g, alice.human, {});
      expect(out.status).toBe(200);
      expect(out.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(out.headers.get('content-disposition')).toBe('attachment; filename="holon-receipts.csv"');
      expect(out.headers.get('cache-control')).toBe('private, no-store');
      const [header, ...rows] = out.records;
      expect(header).toEqual([
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
      ]);
      expect(rows.map((r) => r[0])).toEqual(all.map((r) => r.id));
      for (const row of rows) {
        expect(row).toHaveLength(15);
        const r = all.find((x) => x.id === row[0])!;
        const cell = (name: (typeof RECEIPT_CSV_COLUMNS)[number]) => row[RECEIPT_CSV_COLUMNS.indexOf(name)];
        expect(cell('created_at')).toBe(r.created_at);
        expect(cell('mandate')).toBe(r.mandate);
        expect(cell('status')).toBe(r.status);
        expect(cell('billed')).toBe(String(r.billed));
        expect([cell('cost_own'), cell('cost_downstream'), cell('cost_total')]).toEqual([r.cost.own, r.cost.downstream, r.cost.total]);
        expect(cell('currency')).toBe(r.currency ?? '');
        expect(cell('worst_case')).toBe(r.worst_case ?? '');
        expect(cell('duration_ms')).toBe(r.duration_ms === null ? '' : String(r.duration_ms));
        expect(cell('approval')).toBe(r.approval ?? '');
        expect(cell('children')).toBe(String(r.children.length));
        const agent = r.agent ?? '';
        expect(cell('agent')).toBe(/^[=+\-@\t\r]/.test(agent) ? `'${agent}` : agent);
        const error = r.error ?? '';
        expect(cell('error')).toBe(/^[=+\-@\t\r]/.test(error) ? `'${error}` : error);
      }
      const row = (id: string) => rows.find((r) => r[0] === id)!;
      expect(row(pipeline.id).slice(6)).toEqual(['true', '0.05', '0.04', '0.09', 'EUR', pipeline.worst_case, String(pipeline.duration_ms), '', '2']);
      expect(row(failed.id).slice(4, 10)).toEqual(['failed', 'partial', 'true', '0.01', '0.00', '0.01']);
      expect(row(rejected.id)[4]).toBe('rejected_input');
      // The raw text: each formula start prefixed once, quoting only where RFC 4180 needs it.
      expect(out.body).toContain(`,"'=HYPERLINK(""http://evil.example"",""x"")",denied,,`);
      expect(out.body).toContain(",'+1+1,denied,'-2,");
      expect(out.body).toContain(`,"'-3,4",denied,'@SUM(A1),`);
      expect(out.body).toContain(",'@cmd,denied,,");
      expect(out.body).toContain(",'\tx,denied,,");
      expect(out.body).toContain(`,"'\rx",denied,,`);
      expect(out.body).toContain(`,"plain ""quoted"", with a comma\nand a newline",denied,fine,`);
      expect(
        out.body.startsWith(
          'id,created_at,mandate,agent,status,error,billed,cost_own,cost_downstream,cost_total,currency,worst_case,duration_ms,approval,children\r\n',
        ),
      ).toBe(true);

      // The filters of the list, the same rows.
      const since = all.find((r) => r.id === pipeline.id)!.created_at;
      for (const params of [
        { since },
        { until: since },
        { status: 'denied' },
        { agent: 'examples/flaky' },
        { mandate: work.mandate, status: 'succeeded', since },
      ]) {
        const filtered = await csv(g, alice.human, params);
        expect(
          filtered.records.slice(1).map((r) => r[0]),
          JSON.stringify(params),
        ).toEqual((await allPages(g, alice.human, params, 200)).map((r) => r.id));
      }
      // The mandate's agent key exports the same; another mandate's key only a header.
      expect((await csv(g, work.agent, {})).body).toBe(out.body);
      expect((await csv(g, alice.sandboxAgent, {})).records).toEqual([header]);
      // The list route and the one-receipt route are still what they were: /v0/receipts/{id} does not take the export.
      expect((await send(g.url, 'GET', `/v0/receipts/${pipeline.id}`, { key: alice.human })).body.id).toBe(pipeline.id);
      expect((await send(g.url, 'GET', '/v0/receipts/receipts.csv', { key: alice.human })).status).toBe(404);
      expect((await fetch(`${g.url}/v0/receipts.csv`)).status).toBe(401);
    });
  });
});

describe('bad values', () => {
  test('a 400 invalid_request naming the parameter, on the list, the CSV and the statement; never a 5xx', async () => {
    await useAudited(await startTestGateway({ hosted: true, config: RATES }), async (g) => {
      const alice: Account = await signUp(g.url, 'alice');
      const cases: Array<[Record<string, string>, string]> = [
        [{ since: 'yesterday' }, 'since'],
        [{ since: '2026-02-30T00:00:00Z' }, 'since'],
        [{ since: '2026-03-01T24:00:00Z' }, 'since'],
        [{ since: '2026-03-01T23:59:60Z' }, 'since'],
        [{ since: '2026-03-01T00:00:00' }, 'since'],
        [{ since: '2026-03-01' }, 'since'],
        [{ since: '1969-12-31T23:59:59Z' }, 'since'],
        [{ until: '10000-01-01T00:00:00Z' }, 'until'],
        [{ until: '9999-12-31T23:30:00-01:00' }, 'until'],
        [{ since: `2026-03-01T00:00:00.${'1'.repeat(80)}Z` }, 'since'],
        [{ since: 'x'.repeat(10_000) }, 'since'],
        [{ until: '2026-03-01T00:00:00Z', since: '2026-03-02T00:00:00Z' }, 'until'],
        [{ since: '٢٠٢٦-03-01T00:00:00Z' }, 'since'],
        [{ since: '\u{1F4A9}' }, 'since'],
      ];
      const receiptCases: Array<[Record<string, string>, string]> = [
        ...cases,
        [{ status: 'SUCCEEDED' }, 'status'],
        [{ status: 'settled' }, 'status'],
        [{ status: '' }, 'status'],
        [{ agent: 'Examples/Echo-Upper' }, 'agent'],
        [{ agent: 'examples/echo-upper@^1' }, 'agent'],
        [{ agent: 'examples/echo-upper@' }, 'agent'],
        [{ agent: 'examples/echo-upper@1.0' }, 'agent'],
        [{ agent: 'a/b/c' }, 'agent'],
        [{ agent: 'examples/%' }, 'agent'],
        [{ agent: 'e'.repeat(300) }, 'agent'],
        [{ mandate: 'm'.repeat(5000) }, 'mandate'],
      ];
      const listOnly: Array<[Record<string, string>, string]> = [
        [{ limit: '0' }, 'limit'],
        [{ limit: '201' }, 'limit'],
        [{ limit: 'ten' }, 'limit'],
        [{ limit: '9'.repeat(400) }, 'limit'],
        [{ before: 'r_does_not_exist' }, 'before'],
        [{ before: 'b'.repeat(5000) }, 'before'],
      ];
      const check = async (path: string, params: Record<string, string>, name: string) => {
        const r = await send(g.url, 'GET', `${path}${q(params)}`, { key: alice.human });
        expect(r.status, `${path} ${JSON.stringify(params).slice(0, 80)}: ${JSON.stringify(r.body).slice(0, 200)}`).toBe(400);
        expect(r.body.error.code).toBe('invalid_request');
        expect(r.body.error.message).toMatch(new RegExp(`\\b${name}\\b`));
        expect(r.body.error.message.length).toBeLessThan(400);
      };
      for (const [params, name] of [...receiptCases, ...listOnly]) await check('/v0/receipts', params, name);
      for (const [params, name] of receiptCases) await check('/v0/receipts.csv', params, name);
      for (const [params, name] of cases) await check('/v0/statement', params, name);
      // A parameter given twice, NUL anywhere in the URL.
      for (const path of ['/v0/receipts', '/v0/receipts.csv', '/v0/statement']) {
        const twice = await send(g.url, 'GET', `${path}?since=2026-01-01T00:00:00Z&since=2026-02-01T00:00:00Z`, { key: alice.human });
        expect(twice.status).toBe(400);
        expect(twice.body.error.message).toMatch(/\bsince\b/);
        for (const nul of ['since=%00', 'until=2026-01-01T00:00:00Z%00', 'agent=examples/echo%00']) {
          const r = await send(g.url, 'GET', `${path}?${nul}`, { key: alice.human });
          expect(r.status).toBe(400);
          expect(r.body.error.code).toBe('invalid_request');
        }
        // Broken percent-encoding is read as it is, then refused like any other bad value.
        const broken = await send(g.url, 'GET', `${path}?since=%E0%A4%A`, { key: alice.human });
        expect(broken.status).toBe(400);
      }
      // Whatever the values: never a 5xx, and every refusal is invalid_request.
      const value = fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.constantFrom('2026-01-01T00:00:00Z', 'examples/echo-upper'),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('/v0/receipts', '/v0/receipts.csv', '/v0/statement'),
          fc.dictionary(fc.constantFrom('since', 'until', 'status', 'agent', 'mandate', 'limit', 'before', 'account'), value, { maxKeys: 4 }),
          async (path, params) => {
            const r = await send(g.url, 'GET', `${path}${q(params)}`, { key: alice.human });
            expect(r.status, `${path} ${JSON.stringify(params)}`).toBeLessThan(500);
            if (r.status >= 400) expect(['invalid_request', 'not_found']).toContain(r.body.error.code);
          },
        ),
        { numRuns: 150, seed: 20_260_301 },
      );
    });
  });
});
