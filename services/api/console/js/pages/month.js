// @ts-check
// A month's reconciliation, as receipts.md "Reconciling a month" describes it: per mandate (Σ billed receipts
// against what the mandate reports as spent, never above its total), per agent and version, against the balance
// (credited − billed + earned against what the journal holds), and what was paid for nothing. The sums are made
// here, in micro-units, from the receipts the API returns; the other side of each check comes from another table
// (mandates, the journal), read through GET /v0/mandates and GET /v0/statement. Any month; a CSV of it.

import { download, get, qs } from '../api.js';
import { statementAccounts } from '../accounts.js';
import { actionButton, h, notice, svg } from '../dom.js';
import { page, section, table } from '../format.js';
import { formatMicros, money, sum, toMicros } from '../money.js';

/**
 * @typedef {import('../api-types.js').Receipt} Receipt
 * @typedef {import('../api-types.js').ReceiptPage} ReceiptPage
 * @typedef {import('../api-types.js').MandateView} MandateView
 * @typedef {import('../api-types.js').Statement} Statement
 * @typedef {ReturnType<typeof monthBounds>} Bounds
 */

/** @param {number} n */
const pad = (n) => String(n).padStart(2, '0');

/**
 * "2026-12" → its bounds in UTC, and the months around it.
 * @param {string} month
 */
function monthBounds(month) {
  const [y = 0, m = 1] = month.split('-').map(Number);
  const since = new Date(Date.UTC(y, m - 1, 1));
  const until = new Date(Date.UTC(y, m, 1));
  const prev = new Date(Date.UTC(y, m - 2, 1));
  return {
    since: since.toISOString(),
    until: until.toISOString(),
    days: Math.round((until.getTime() - since.getTime()) / 86_400_000),
    prev: `${prev.getUTCFullYear()}-${pad(prev.getUTCMonth() + 1)}`,
    next: `${until.getUTCFullYear()}-${pad(until.getUTCMonth() + 1)}`,
  };
}

const thisMonth = () => {
  const d = new Date();
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}`;
};

/**
 * Every top-level receipt of the period, page after page.
 * @param {string} since
 * @param {string} until
 */
async function allReceipts(since, until) {
  /** @type {Receipt[]} */
  const out = [];
  /** @type {string | null | undefined} */
  let before;
  do {
    /** @type {ReceiptPage} */
    const pageOf = await get(`/v0/receipts${qs({ since, until, limit: 200, before })}`);
    out.push(...pageOf.receipts);
    before = pageOf.next;
  } while (before);
  return out;
}

/** @type {(receipts: Receipt[]) => Receipt[]} */
const flatten = (receipts) => receipts.flatMap((r) => [r, ...flatten(r.children ?? [])]);

/** @type {(ok: boolean, yes: string, no: string) => HTMLElement} */
const check = (ok, yes, no) => h('span', { class: ok ? 'check-ok' : 'check-bad' }, ok ? `✓ ${yes}` : `✗ ${no}`);

/**
 * The month picker, with links to the months around it.
 * @param {string} month
 * @param {Bounds} b
 * @param {(hash: string) => void} navigate
 */
function picker(month, b, navigate) {
  const input = h('input', { id: 'month', name: 'month', type: 'month', value: month, required: true });
  return h(
    'form',
    {
      class: 'filters',
      'aria-label': 'Choose the month',
      on: {
        submit: (/** @type {SubmitEvent} */ e) => {
          e.preventDefault();
          navigate(`#/month/${input.value}`);
        },
      },
    },
    h('div', { class: 'field' }, h('label', { for: 'month' }, 'Month'), input),
    h('button', { type: 'submit' }, 'Show'),
    h('a', { href: `#/month/${b.prev}` }, `← ${b.prev}`),
    h('a', { href: `#/month/${b.next}` }, `${b.next} →`),
  );
}

/** @param {import('../app.js').PageContext} page */
export async function render({ params, who, navigate }) {
  const month = params[0] && /^\d{4}-\d{2}$/.test(params[0]) ? params[0] : thisMonth();
  const b = monthBounds(month);
  const accounts = await statementAccounts(who);
  const [receipts, mandates, statements] = await Promise.all([
    allReceipts(b.since, b.until),
    /** @type {Promise<import('../api-types.js').Mandates>} */ (get('/v0/mandates')),
    Promise.all(
      accounts.map(
        (account) =>
          /** @type {Promise<Statement>} */ (get(`/v0/statement${qs({ since: b.since, until: b.until, ...(who.kind === 'operator' ? { account } : {}) })}`)),
      ),
    ),
  ]);
  const billed = receipts.filter((r) => r.billed);
  return page(
    `Month ${month}`,
    `From ${b.since.slice(0, 10)} to ${b.until.slice(0, 10)} (UTC): ${receipts.length} call${receipts.length === 1 ? '' : 's'}, ${billed.length} billed. A delegated run counts in the month its top receipt was written.`,
    picker(month, b, navigate),
    h(
      'p',
      {},
      actionButton('Download the month as CSV', () => downloadCsv(b, month), { id: 'csv' }),
    ),
    chart(receipts, b),
    perMandate(receipts, mandates.mandates, statements, new Date(b.until) > new Date()),
    perAgent(receipts),
    againstBalance(statements, receipts),
    forNothing(receipts),
  );
}

/**
 * Per mandate: Σ of its receipts against what it reports as spent, and never above its total.
 * @param {Receipt[]} receipts
 * @param {MandateView[]} mandates
 * @param {Statement[]} statements
 * @param {boolean} current the month is not over: what was billed to its end is all that was billed
 */
function perMandate(receipts, mandates, statements, current) {
  const ranged = new Map(statements.flatMap((s) => s.mandates).map((m) => [m.id, m]));
  const rows = mandates.map((m) => {
    // Every top-level receipt's total: an orchestrator that failed after paying sub-calls is unbilled itself but
    // carries their cost, which the mandate's spent counts too.
    const mine = receipts.filter((r) => r.mandate === m.mandate.id && toMicros(r.cost.total) > 0n);
    const billedHere = sum(mine.map((r) => r.cost.total));
    const s = ranged.get(m.mandate.id);
    const toDate = s ? toMicros(s.billed_to_date) : null;
    const spent = toMicros(m.budget.spent);
    const total = toMicros(m.budget.total);
    return { m, calls: mine.length, billedHere, inRange: s ? toMicros(s.billed_in_range) : null, toDate, spent, total };
  });
  return section(
    'Per mandate',
    table(
      'Billed receipts against what each mandate reports as spent',
      [
        { label: 'Mandate', cell: (r) => r.m.mandate.id },
        { label: 'Charged calls', cell: (r) => String(r.calls), numeric: true },
        { label: 'Charged this month', cell: (r) => money(r.billedHere, r.m.budget.currency), numeric: true },
        { label: 'Billed to the month’s end', cell: (r) => (r.toDate === null ? '—' : money(r.toDate)), numeric: true },
        { label: 'Spent (the mandate)', cell: (r) => money(r.spent), numeric: true },
        { label: 'Total budget', cell: (r) => money(r.total), numeric: true },
        {
          label: 'Check',
          cell: (r) => [
            r.inRange === null ? null : check(r.inRange === r.billedHere, 'every receipt counted', 'the receipts read here differ from the gateway’s sum'),
            h('br'),
            check(r.spent <= r.total, 'within its total', 'above its total'),
            h('br'),
            r.toDate === null
              ? null
              : current
                ? check(r.toDate === r.spent, 'receipts = spent', `receipts ${formatMicros(r.toDate)} ≠ spent ${formatMicros(r.spent)}`)
                : check(r.toDate <= r.spent, 'receipts ≤ spent', 'receipts above spent'),
          ],
        },
      ],
      rows,
      { empty: 'No mandate.', wide: true },
    ),
    h(
      'p',
      { class: 'hint' },
      'When the month is the current one, “billed to the month’s end” must equal “spent”: every billed receipt is in the mandate’s spent, and nothing else is.',
    ),
  );
}

/**
 * Per agent and version: calls, billed calls, what they were charged.
 * @param {Receipt[]} receipts
 */
function perAgent(receipts) {
  /** @type {Map<string, { agent: string, currency: string | null, calls: number, billedCalls: number, billed: bigint }>} */
  const groups = new Map();
  for (const r of receipts) {
    const key = r.agent ?? '(not resolved)';
    const g = groups.get(key) ?? { agent: key, currency: r.currency, calls: 0, billedCalls: 0, billed: 0n };
    g.calls++;
    if (r.billed) g.billedCalls++;
    g.billed += toMicros(r.cost.total);
    groups.set(key, g);
  }
  const rows = [...groups.values()].sort((a, b) => (b.billed > a.billed ? 1 : b.billed < a.billed ? -1 : a.agent.localeCompare(b.agent)));
  return section(
    'Per agent and version',
    table(
      'What each agent version cost this month',
      [
        { label: 'Agent', cell: (g) => g.agent },
        { label: 'Calls', cell: (g) => String(g.calls), numeric: true },
        { label: 'Billed calls', cell: (g) => String(g.billedCalls), numeric: true },
        { label: 'Charged', cell: (g) => money(g.billed, g.currency), numeric: true },
        { label: 'Per billed call', cell: (g) => (g.billedCalls ? money(g.billed / BigInt(g.billedCalls), g.currency) : '—'), numeric: true },
      ],
      rows,
      { empty: 'No call this month.' },
    ),
  );
}

/**
 * Against the balance: opening + credited − billed + earned against the journal's closing balance.
 * @param {Statement[]} statements
 * @param {Receipt[]} receipts
 */
function againstBalance(statements, receipts) {
  const rows = statements.flatMap((s) =>
    s.currencies.map((c) => {
      const opening = toMicros(c.opening);
      const expected = opening + toMicros(c.credited) - toMicros(c.billed) + toMicros(c.earned);
      const fromReceipts = sum(receipts.filter((r) => r.currency === c.currency && r.payer === s.account).map((r) => r.cost.total));
      return { account: s.account, c, expected, closing: toMicros(c.closing), fromReceipts };
    }),
  );
  return section(
    'Against the balance',
    table(
      'Credited, billed and earned against the balance',
      [
        ...(statements.length > 1 ? [{ label: 'Account', cell: (/** @type {{ account: string }} */ r) => r.account }] : []),
        { label: 'Opening', cell: (r) => money(r.c.opening, r.c.currency), numeric: true },
        { label: 'Credited', cell: (r) => `+ ${money(r.c.credited)}`, numeric: true },
        { label: 'Billed', cell: (r) => `− ${money(r.c.billed)}`, numeric: true },
        { label: 'Earned', cell: (r) => `+ ${money(r.c.earned)}`, numeric: true },
        { label: 'Expected', cell: (r) => money(r.expected), numeric: true },
        { label: 'Closing (journal)', cell: (r) => money(r.c.closing), numeric: true },
        {
          label: 'Check',
          cell: (r) => [
            check(r.expected === r.closing, 'balances', `off by ${formatMicros(r.closing - r.expected)}`),
            h('br'),
            check(
              r.fromReceipts === toMicros(r.c.billed),
              'your receipts = billed',
              `your receipts show ${formatMicros(r.fromReceipts)}: the rest paid sub-calls of your included agents`,
            ),
          ],
        },
      ],
      rows,
      { empty: 'No money moved this month.' },
    ),
  );
}

/** @param {Receipt[]} receipts */
function forNothing(receipts) {
  const all = flatten(receipts);
  const count = (/** @type {string} */ s) => all.filter((r) => r.status === s).length;
  const rejected = count('rejected_input');
  return section(
    'Paid for nothing',
    h(
      'dl',
      { class: 'facts', id: 'for-nothing' },
      h('dt', {}, 'Failed'),
      h('dd', { 'data-count': 'failed' }, String(count('failed'))),
      h('dt', {}, 'Denied'),
      h('dd', { 'data-count': 'denied' }, String(count('denied'))),
      h('dt', {}, 'Rejected input'),
      h('dd', { 'data-count': 'rejected_input' }, String(rejected)),
    ),
    h('p', {}, 'They cost nothing but time: only a run whose output matches the agent’s schema is billed.'),
    rejected
      ? notice(
          'info',
          `${rejected} call${rejected === 1 ? ' was' : 's were'} refused as rejected_input. That usually means your agent builds a payload the agent’s schema does not accept, not that the agent is bad: compare the input with its schema on the Try page.`,
        )
      : null,
  );
}

/**
 * Σ billed per day, as bars; the figures are also in the table of the per-mandate section.
 * @param {Receipt[]} receipts
 * @param {Bounds} b
 */
function chart(receipts, b) {
  const perDay = Array.from({ length: b.days }, () => 0n);
  for (const r of receipts) {
    const day = new Date(r.created_at).getUTCDate() - 1;
    perDay[day] = (perDay[day] ?? 0n) + toMicros(r.cost.total);
  }
  // biome-ignore lint/complexity/useMathMinMax: BigInt amounts: Math.max does not take them
  const top = perDay.reduce((m, v) => (v > m ? v : m), 0n);
  const W = 620;
  const H = 160;
  const step = W / b.days;
  const bars = perDay.map((v, i) => {
    const height = top > 0n ? Math.max(v > 0n ? 2 : 0, Number((v * 130n) / top)) : 0;
    return svg(
      'rect',
      { x: (i * step + 1).toFixed(1), y: 140 - height, width: Math.max(1, step - 2).toFixed(1), height },
      svg('title', {}, `day ${i + 1}: ${formatMicros(v)}`),
    );
  });
  const labels = [1, 8, 15, 22, b.days].map((d) => svg('text', { x: ((d - 1) * step + 1).toFixed(1), y: 155 }, String(d)));
  const total = perDay.reduce((a, v) => a + v, 0n);
  return section(
    'Spend over the month',
    h(
      'figure',
      { class: 'chart' },
      svg(
        'svg',
        { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `Billed per day; ${formatMicros(total)} in all, the most in one day ${formatMicros(top)}` },
        bars,
        labels,
      ),
      h('figcaption', { class: 'legend' }, `Billed per day (UTC), ${formatMicros(total)} in all.`),
    ),
  );
}

/**
 * @param {Bounds} b
 * @param {string} month
 */
async function downloadCsv(b, month) {
  const response = await download(`/v0/receipts.csv${qs({ since: b.since, until: b.until })}`, 'text/csv');
  const url = URL.createObjectURL(await response.blob());
  const a = h('a', { href: url, download: `holon-receipts-${month}.csv`, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
