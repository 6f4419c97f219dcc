// @ts-check
// Pieces shared by the Try, Publish and Operator pages: an agent's price, its Agent Record, its evaluation, a
// receipt in short, and the API's per-field problems put where they belong. Everything an author, an agent or a
// caller wrote goes in as text (dom.js `h`), never as HTML.

import { h } from './dom.js';
import { cost, duration, status, when } from './format.js';
import { money } from './money.js';
import { receiptHash } from './paths.js';

/**
 * @typedef {import('./api-types.js').AgentView} AgentView
 * @typedef {import('./api-types.js').Evaluation} Evaluation
 * @typedef {import('./api-types.js').EvaluationSuite} EvaluationSuite
 * @typedef {NonNullable<EvaluationSuite['cases']>[number]} EvaluationCase
 * @typedef {import('./api-types.js').Pricing} Pricing
 * @typedef {import('./api-types.js').Problem} Problem
 * @typedef {import('./api-types.js').Receipt} Receipt
 * @typedef {import('./api-types.js').WindowRecord} WindowRecord
 * @typedef {import('./dom.js').Child} Child
 * @typedef {import('./dom.js').Field} Field
 */

/**
 * The figures of a compact record line (a search result's `record`, or an operator's sample).
 * @typedef {{ runs?: number, success_rate?: number | null, payers?: number, counted_payers?: number,
 *   cost_per_successful_run?: string | null, currency?: string | null, latency_p50_ms?: number | null }} RecordFigures
 */

/**
 * An API message as a sentence: capital first letter, a full stop at the end.
 * @param {unknown} message
 */
export function sentence(message) {
  const s = String(message ?? '').trim();
  if (!s) return '';
  const first = s.charAt(0).toUpperCase() + s.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

/**
 * `$.text` → `text`, `$.items[0].name` → `items[0].name`, `$` → `the whole value`.
 * @param {unknown} path
 */
function fieldName(path) {
  const p = String(path ?? '$');
  if (p === '$') return 'the whole value';
  return p.replace(/^\$\.?/, '');
}

/**
 * A success rate (0..1, 4 decimals) as a percentage; floats are fine here: it is not money.
 * @param {number | string | null | undefined} rate
 */
function percent(rate) {
  if (rate === null || rate === undefined) return '—';
  return `${Math.round(Number(rate) * 10000) / 100} %`;
}

/**
 * @param {string | null | undefined} amount
 * @param {string | null | undefined} currency
 */
const amountOr = (amount, currency) => (amount === null || amount === undefined ? '—' : money(amount, currency ?? undefined));

/**
 * The list price in words: "0.01 EUR per run", "0.005 EUR per page, at most 0.50 EUR a run", …
 * @param {Pricing | null | undefined} pricing
 */
export function priceText(pricing) {
  if (!pricing) return '—';
  const c = pricing.currency;
  // A model's amounts are there for it (the manifest was validated): a missing one would show as "not an amount".
  const amount = String(pricing.amount);
  const max = String(pricing.max);
  let text;
  switch (pricing.model) {
    case 'free':
      text = 'Free';
      break;
    case 'per_run':
      text = `${money(amount, c)} per run`;
      break;
    case 'per_unit':
      text = `${money(amount, c)} per ${pricing.unit ?? 'unit'}, at most ${money(max, c)} a run`;
      break;
    case 'quote':
      text = `Quoted by the agent for each run, at most ${money(max, c)}`;
      break;
    default:
      text = String(pricing.model);
  }
  if (pricing.charge_on === 'attempt') text += ' (declared errors marked as billed are charged too)';
  return text;
}

/**
 * The compact record of search results: "12 runs · 91.67 % succeeded · 4 payers · 0.011 EUR per successful run · median 40 ms".
 * @param {RecordFigures | null | undefined} record
 */
export function recordLine(record) {
  if (!record?.runs) return 'No runs measured yet.';
  const parts = [`${record.runs} run${record.runs === 1 ? '' : 's'}`, `${percent(record.success_rate)} succeeded`];
  // Samples (HOLON_RECORDS) have no payers: only a measured record says who paid.
  if (typeof record.payers === 'number') {
    const counted =
      typeof record.counted_payers === 'number' && record.counted_payers !== record.payers ? ` (${record.counted_payers} counted for ranking)` : '';
    parts.push(`${record.payers} payer${record.payers === 1 ? '' : 's'}${counted}`);
  }
  if (record.cost_per_successful_run !== null && record.cost_per_successful_run !== undefined) {
    parts.push(`${amountOr(record.cost_per_successful_run, record.currency)} per successful run`);
  }
  if (record.latency_p50_ms !== null && record.latency_p50_ms !== undefined) parts.push(`median ${duration(record.latency_p50_ms)}`);
  return parts.join(' · ');
}

/**
 * A measure-by-window table: rows are measures (th scope=row), columns the windows.
 * @param {string} caption
 * @param {Array<[string, WindowRecord]>} windows
 */
function recordTable(caption, windows) {
  /** @type {Array<[string, (w: WindowRecord) => string]>} */
  const measures = [
    ['Runs', (w) => String(w.runs)],
    ['Successes', (w) => String(w.successes)],
    ['Distinct payers (the author’s own calls never count)', (w) => String(w.payers)],
    ['Payers counted for ranking (linked to GitHub, or paying with more than sign-up credit)', (w) => String(w.counted_payers)],
    ['Success rate', (w) => percent(w.success_rate)],
    ['Cost per successful run', (w) => amountOr(w.cost_per_successful_run, w.currency)],
    ['Billed in all', (w) => (w.runs ? amountOr(w.billed_total, w.currency) : '—')],
    ['Latency, median (p50)', (w) => duration(w.latency_ms?.p50)],
    ['Latency, p95', (w) => duration(w.latency_ms?.p95)],
  ];
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: '0' },
    h(
      'table',
      {},
      h('caption', {}, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Measure'),
          windows.map(([label]) => h('th', { scope: 'col', class: 'num' }, label)),
        ),
      ),
      h(
        'tbody',
        {},
        measures.map(([label, cell]) =>
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, label),
            windows.map(([, w]) => h('td', { class: 'num' }, cell(w))),
          ),
        ),
      ),
    ),
  );
}

/**
 * The full Agent Record (GET /v0/agents/{ns}/{name} `records`, and `sample` when the operator set one).
 * @param {AgentView} agent
 */
export function agentRecord(agent) {
  const r = agent.records;
  const version = r?.version;
  const whole = r?.agent;
  const measured = Boolean(whole?.all_time?.runs || version?.all_time?.runs);
  /** @type {HTMLElement[]} */
  const parts = [
    h(
      'p',
      { class: 'hint' },
      'Measured by Holon from every finished run: what callers experienced. Gateway errors, restarts and cancellations are not counted against the agent.',
    ),
  ];
  if (!measured) parts.push(h('p', { class: 'empty' }, 'No runs measured yet: nobody has called this agent through this gateway.'));
  else {
    if (version) {
      parts.push(
        recordTable(`Version ${agent.version}`, [
          ['Last 30 days', version.last_30_days],
          ['All time', version.all_time],
        ]),
      );
    }
    if (whole && (whole.all_time.runs !== version?.all_time?.runs || (agent.versions?.length ?? 1) > 1)) {
      parts.push(
        recordTable(`Every version of ${agent.id}, withdrawn ones included`, [
          ['Last 30 days', whole.last_30_days],
          ['All time', whole.all_time],
        ]),
      );
    }
    const errors = Object.entries(whole?.all_time?.errors ?? {});
    if (errors.length) {
      parts.push(
        h(
          'p',
          {},
          'Failures by error code (every version, all time): ',
          errors.map(([code, n], i) => [i ? ', ' : '', h('code', {}, code), ` ${n}`]),
        ),
      );
    }
    const currencies = whole?.all_time?.by_currency;
    if (currencies?.length) {
      parts.push(
        h(
          'p',
          { class: 'hint' },
          `Runs were settled in ${currencies.length} currencies; the money above is in ${whole.all_time.currency}, never converted: `,
          currencies.map((c) => `${c.runs} runs in ${c.currency}`).join(', '),
          '.',
        ),
      );
    }
  }
  if (agent.sample) {
    const s = agent.sample;
    parts.push(
      h(
        'div',
        { class: 'notice info', role: 'note' },
        h('p', {}, h('strong', {}, 'Sample figures, not measurements: '), sentence(s.note)),
        h(
          'p',
          {},
          recordLine({
            runs: s.runs,
            success_rate: s.success_rate,
            cost_per_successful_run: s.cost_per_successful_run,
            currency: s.currency,
            latency_p50_ms: s.latency_ms?.p50,
          }),
        ),
      ),
    );
  }
  return parts;
}

/**
 * A Markdown text (an author's description) as plain paragraphs of text: never parsed, never HTML.
 * @param {string | null | undefined} text
 */
export function plainParagraphs(text, { show = 2 } = {}) {
  const paragraphs = String(text ?? '')
    .trim()
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean);
  const shown = paragraphs.slice(0, show).map((p) => h('p', {}, p));
  if (paragraphs.length <= show) return shown;
  return [
    ...shown,
    h(
      'details',
      {},
      h('summary', {}, `Read the rest (${paragraphs.length - show} more paragraph${paragraphs.length - show === 1 ? '' : 's'})`),
      paragraphs.slice(show).map((p) => h('p', {}, p)),
    ),
  ];
}

/** @type {Readonly<Record<string, [string, string]>>} */
const EVALUATION_WORDS = {
  passed: ['passed', 's-succeeded'],
  failed: ['failed', 's-failed'],
  error: ['could not finish', 's-failed'],
  pending: ['pending', 's-pending'],
  queued: ['queued', 's-pending'],
  running: ['running', 's-pending'],
  none: ['not evaluated', ''],
};

/**
 * An evaluation standing or a suite's status as a word with a shape (never colour alone).
 * @param {string} s
 */
function evaluationStatus(s) {
  const [word, cls] = EVALUATION_WORDS[s] ?? [String(s), ''];
  return h('span', { class: `status ${cls}`.trim() }, word);
}

/** @param {unknown} value */
const asJson = (value) => {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
};

/**
 * One case of a suite's run: hidden ones as passed or failed only.
 * @param {EvaluationCase} c
 * @param {boolean} hidden
 */
function caseItem(c, hidden) {
  const mark = c.passed ? h('span', { class: 'check-ok' }, '✓ passed') : h('span', { class: 'check-bad' }, '✗ failed');
  if (hidden || !('id' in c)) return h('li', {}, `Case ${c.case}: `, mark);
  const reasons = Array.isArray(c.reasons) ? c.reasons : [];
  return h(
    'li',
    {},
    `Case ${c.case} `,
    h('code', {}, String(c.id ?? '')),
    ': ',
    mark,
    c.duration_ms !== undefined ? ` (${duration(c.duration_ms)})` : null,
    reasons.length
      ? h(
          'ul',
          {},
          reasons.map((r) => h('li', {}, String(r))),
        )
      : null,
    c.expected !== undefined || c.got !== undefined
      ? h(
          'details',
          {},
          h('summary', {}, 'Expected and got'),
          h('p', {}, 'Expected:'),
          h('pre', { class: 'text' }, asJson(c.expected)),
          h('p', {}, 'Got:'),
          h('pre', { class: 'text' }, asJson(c.got)),
        )
      : null,
  );
}

/**
 * One suite's latest run: its status, how many cases passed, when; with `cases`, each case.
 * @param {EvaluationSuite} s
 * @param {boolean} cases
 */
function suiteItem(s, cases) {
  const unfinished = s.status === 'queued' || s.status === 'running';
  const needs = s.pass_threshold !== undefined ? `; passing needs ${percent(Number(s.pass_threshold))} of the cases` : '';
  return h(
    'li',
    {},
    h('code', {}, s.capability),
    ' ',
    evaluationStatus(s.status),
    unfinished ? `: ${s.progress ?? 'no case'} judged so far.` : `: ${s.passed} of ${s.total} case${s.total === 1 ? '' : 's'} passed${needs}.`,
    ` Suite version ${s.suite_version}, run ${s.run}`,
    s.finished_at ? `, finished ${when(s.finished_at)}` : '',
    s.duration_ms !== null && s.duration_ms !== undefined ? ` in ${duration(s.duration_ms)}` : '',
    '.',
    s.hidden ? h('p', { class: 'hint' }, 'Hidden holdout cases: shown as passed or failed only.') : null,
    s.reason ? h('p', {}, 'Why it could not finish: ', sentence(s.reason)) : null,
    cases && s.cases?.length
      ? h(
          'details',
          {},
          h('summary', {}, `The ${s.cases.length} case${s.cases.length === 1 ? '' : 's'}`),
          h(
            'ul',
            {},
            s.cases.map((c) => caseItem(c, s.hidden)),
          ),
        )
      : null,
  );
}

/**
 * A version's evaluation: its standing and each suite's latest run; with cases, public ones in detail.
 * @param {Evaluation | null | undefined} evaluation
 * @returns {Child[]}
 */
export function evaluationView(evaluation, { cases = true } = {}) {
  if (!evaluation || evaluation.status === 'none' || !evaluation.suites?.length) {
    return [h('p', {}, evaluationStatus('none'), ' No evaluation suite applies to its capabilities, or it ships with the gateway.')];
  }
  return [
    h('p', {}, 'Standing: ', evaluationStatus(evaluation.status)),
    h(
      'ul',
      {},
      evaluation.suites.map((s) => suiteItem(s, cases)),
    ),
  ];
}

/**
 * A receipt in short: status, cost, splits, duration, with a link to the whole receipt.
 * @param {Receipt} receipt
 */
export function receiptFacts(receipt) {
  /** @type {Array<[string, Child] | null>} */
  const rows = [
    ['Receipt', h('a', { href: receiptHash(receipt.id) }, receipt.id)],
    ['Status', status(receipt.status)],
    receipt.error ? ['Error code', h('code', {}, receipt.error)] : null,
    ['Agent', receipt.agent ?? '—'],
    ['Mandate', receipt.mandate ?? '—'],
    ['Cost', cost(receipt)],
    receipt.worst_case !== null && receipt.worst_case !== undefined ? ['Worst case', money(receipt.worst_case, receipt.currency ?? undefined)] : null,
    [
      'Splits',
      receipt.splits?.length
        ? h(
            'ul',
            {},
            receipt.splits.map((s) =>
              h('li', {}, `${money(s.amount, receipt.currency ?? undefined)} to ${s.to}${s.to === 'holon' ? ' (the platform fee)' : ''}`),
            ),
          )
        : 'Nobody: no money moved.',
    ],
    ['Duration', duration(receipt.duration_ms)],
    receipt.reasons?.length
      ? [
          'Why',
          h(
            'ul',
            {},
            receipt.reasons.map((r) => h('li', {}, sentence(r))),
          ),
        ]
      : null,
  ];
  return h(
    'dl',
    { class: 'facts' },
    rows.map((row) => (row ? [h('dt', {}, row[0]), h('dd', {}, row[1])] : null)),
  );
}

/**
 * Put an API refusal's problems where they belong: `fieldFor(path)` names the field (from dom.js `field`) a
 * path belongs to, or null. Messages for one field are joined; the rest go into `list` (a <ul>) as
 * "path: message". Returns how many problems were not placed at a field.
 */
/**
 * @param {Problem[] | null | undefined} problems
 * @param {(path: string) => Field | null | undefined} fieldFor
 * @param {(f: Field, message: string) => void} setError
 * @param {HTMLElement | null} list
 */
export function placeProblems(problems, fieldFor, setError, list) {
  /** @type {Map<Field, Problem[]>} */
  const byField = new Map();
  /** @type {Problem[]} */
  const rest = [];
  for (const p of problems ?? []) {
    const f = fieldFor(p.path);
    if (f) byField.set(f, [...(byField.get(f) ?? []), p]);
    else rest.push(p);
  }
  for (const [f, ps] of byField) setError(f, ps.map((p) => `${describeProblem(p)}`).join(' '));
  if (list) {
    list.replaceChildren(...rest.map((p) => h('li', {}, h('code', {}, String(p.path)), ' ', String(p.message))));
    list.hidden = rest.length === 0;
  }
  return rest.length;
}

/**
 * One problem in words, for a field: 'The field “text” is required.', or 'The value must be object.' for the whole.
 * @param {{ path?: unknown, message?: unknown }} p
 */
export function describeProblem(p) {
  const name = fieldName(p.path);
  const message = String(p.message ?? '');
  if (name === 'the whole value') return sentence(`the value ${message}`);
  // Some messages name their field already ("token must be …"): not twice.
  const last = name.split(/[.[]/).pop() ?? '';
  if (message.startsWith(`${last} `)) return sentence(`the field “${name}” ${message.slice(last.length + 1)}`);
  return sentence(`the field “${name}” ${message}`);
}

/** A unique-enough Idempotency-Key for a retried admin action. */
export function requestKey() {
  if (typeof globalThis.crypto?.randomUUID === 'function') return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}
