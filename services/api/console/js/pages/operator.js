// @ts-check
// Operator (#/operator, the admin key): find accounts and disable one (its keys revoked, its email blocked, its
// agents withdrawn if asked), withdraw one published version, give demo credit, and read the moderation log.
// Every action carries a reason and lands in the log; outcomes are shown in place, without a reload.

import { ApiError, get, qs, request } from '../api.js';
import { actionButton, checked, field, fill, h, notice, setFieldError } from '../dom.js';
import { page, section, table, when } from '../format.js';
import { isPositiveAmount, money, toMicros, typedAmount } from '../money.js';
import { describeProblem, placeProblems, requestKey, sentence } from '../agent-view.js';
import { adminYankUrl, parseVersionRef } from '../paths.js';

/**
 * @typedef {import('../dom.js').Field} Field
 * @typedef {import('../api-types.js').AdminAccount} AdminAccount
 * @typedef {import('../api-types.js').Answer<'disableAccount'>} Disabled
 * @typedef {import('../api-types.js').ModerationLog} ModerationLog
 * @typedef {ModerationLog['entries'][number]} LogEntry
 */

/**
 * Problems of a refused request at their fields (`paths` maps "$.reason" → field), the rest as one sentence.
 * @param {ApiError} e
 * @param {Record<string, Field>} paths
 * @param {Field | null} fallback
 */
function refusalAt(e, paths, fallback) {
  /** @type {string[]} */
  const rest = [];
  const list = e.problems ?? [];
  placeProblems(list, (path) => paths[path] ?? null, setFieldError, null);
  for (const p of list) if (!paths[p.path]) rest.push(describeProblem(p));
  if (!list.length) {
    if (fallback) setFieldError(fallback, sentence(e.message));
    else rest.push(sentence(e.message));
  }
  return rest.join(' ');
}

/** @param {AdminAccount['balances']} balances */
const balancesText = (balances) =>
  balances?.length
    ? balances.map((b) => `${money(b.balance, b.currency)}${toMicros(b.held) ? ` (${money(b.held, b.currency)} held)` : ''}`).join(', ')
    : 'none';

/** @param {import('../app.js').PageContext} p */
export async function render(p) {
  const log = logSection();
  const accounts = accountsSection(() => log.reload());
  const withdraw = withdrawSection(() => log.reload());
  const credit = creditSection(() => accounts.refresh());
  await Promise.all([log.reload(), accounts.search()]);
  p.onLeave(() => accounts.leave());
  return page(
    'Operator',
    'Moderation and demo credit. Every action needs a reason, is logged with it, and cannot be undone from here: the log is append-only.',
    accounts.node,
    withdraw,
    credit,
    log.node,
  );
}

// ------------------------------------------------------------------------------------------------ accounts

/**
 * An account's card: its facts, and the form that disables it while it is active.
 * @param {AdminAccount} a
 * @param {() => void} logged
 */
function accountCard(a, logged) {
  const box = h('article', { class: 'card', 'aria-label': `Account ${a.handle}` });
  /** @type {(account: AdminAccount, outcome?: HTMLElement) => void} */
  const draw = (account, outcome) => {
    const disabled = account.state === 'disabled';
    fill(
      box,
      h('h3', {}, account.handle, ' ', h('span', { class: `status ${disabled ? 's-failed' : 's-succeeded'}` }, disabled ? 'disabled' : 'active')),
      accountFacts(account, disabled),
      outcome ?? null,
      disabled
        ? null
        : disableForm(account, logged, (done) => {
            draw(
              { ...account, state: 'disabled', disabled_at: done.account.disabled_at, disabled_reason: done.account.disabled_reason, live_keys: 0 },
              outcomeOf(done),
            );
            // The form is gone with the account's active state: keep the focus in its card, on the outcome.
            const said = /** @type {HTMLElement | null} */ (box.querySelector('.notice'));
            said?.setAttribute('tabindex', '-1');
            said?.focus();
          }),
    );
  };
  draw(a);
  return box;
}

/**
 * @param {AdminAccount} account
 * @param {boolean} disabled
 */
function accountFacts(account, disabled) {
  return h(
    'dl',
    { class: 'facts' },
    h('dt', {}, 'Email'),
    h('dd', {}, account.email ?? '—'),
    h('dt', {}, 'Since'),
    h('dd', {}, when(account.created_at)),
    h('dt', {}, 'Live keys'),
    h('dd', {}, String(account.live_keys)),
    h('dt', {}, 'Balance'),
    h('dd', {}, balancesText(account.balances)),
    disabled ? [h('dt', {}, 'Disabled'), h('dd', {}, when(account.disabled_at), account.disabled_reason ? `: ${account.disabled_reason}` : '')] : null,
  );
}

/** @param {Disabled} done */
function outcomeOf(done) {
  const yanked = done.yanked ?? [];
  return notice(
    'ok',
    h(
      'p',
      {},
      `Disabled ${done.account.handle}: ${done.keys_revoked} key${done.keys_revoked === 1 ? '' : 's'} revoked`,
      done.email_blocked ? ', the email blocked from signing up again' : '',
      yanked.length ? `, ${yanked.length} version${yanked.length === 1 ? '' : 's'} withdrawn (${yanked.join(', ')})` : ', no version withdrawn',
      '.',
    ),
    done.announced === false ? h('p', {}, 'The other gateway processes were not told yet: they hide the withdrawn versions at their next start.') : null,
  );
}

/**
 * Disable an account, with a reason, and its listed agents withdrawn if asked.
 * @param {AdminAccount} account
 * @param {() => void} logged
 * @param {(done: Disabled) => void} disabled
 */
function disableForm(account, logged, disabled) {
  const reason = field({
    label: `Why disable ${account.handle}`,
    name: 'reason',
    hint: 'Required, for the moderation log (at most 1000 characters). Every key of the account is revoked at once.',
    required: true,
  });
  const yank = field({ label: 'Also withdraw their listed agents', name: 'yank_agents', type: 'checkbox' });
  const result = h('div', { 'aria-live': 'polite' });
  const button = actionButton(
    `Disable ${account.handle}`,
    async () => {
      setFieldError(reason, '');
      fill(result);
      if (!reason.input.value.trim()) {
        setFieldError(reason, 'Say why: the reason is kept in the moderation log.');
        reason.input.focus();
        return;
      }
      try {
        /** @type {import('../api.js').Answer<Disabled>} */
        const { body } = await request('POST', `/v0/admin/accounts/${encodeURIComponent(account.handle)}/disable`, {
          reason: reason.input.value.trim(),
          yank_agents: checked(yank),
        });
        disabled(body);
        logged();
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        const rest = refusalAt(e, { '$.reason': reason, '$.yank_agents': yank }, null);
        if (rest) fill(result, notice('error', rest, e.status === 409 ? ' Search again to see its state.' : ''));
        if (!reason.error.hidden) reason.input.focus();
      }
    },
    { class: 'danger', type: 'submit' },
  );
  return h(
    'form',
    {
      'aria-label': `Disable ${account.handle}`,
      on: { submit: (/** @type {SubmitEvent} */ event) => event.preventDefault() },
    },
    h('details', {}, h('summary', {}, `Disable ${account.handle}…`), reason.row, yank.row, h('p', {}, button), result),
  );
}

/** @param {() => void} logged */
function accountsSection(logged) {
  const q = field({ label: 'Find accounts', name: 'q', type: 'search', hint: 'Part of a handle or an email. Leave it empty for the newest accounts.' });
  const statusLine = h('p', { role: 'status' });
  const list = h('div', { id: 'operator-accounts' });
  let sequence = 0;
  let lastQuery = '';

  async function search(query = q.input.value.trim()) {
    const mine = ++sequence;
    lastQuery = query;
    setFieldError(q, '');
    statusLine.className = 'loading';
    statusLine.textContent = 'Searching…';
    /** @type {import('../api-types.js').AdminAccounts} */
    let body;
    try {
      body = await get(`/v0/admin/accounts${qs({ q: lastQuery, limit: 50 })}`);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (mine !== sequence) return;
      statusLine.className = '';
      statusLine.textContent = '';
      setFieldError(q, refusalAt(e, {}, null) || sentence(e.message));
      return;
    }
    if (mine !== sequence) return;
    statusLine.className = '';
    const accounts = body.accounts ?? [];
    statusLine.textContent = accounts.length
      ? `${accounts.length} account${accounts.length === 1 ? '' : 's'}${lastQuery ? ` matching “${lastQuery}”` : ', newest first'}${accounts.length === 50 ? ' (the first 50: narrow the search)' : ''}.`
      : '';
    fill(
      list,
      accounts.length
        ? accounts.map((a) => accountCard(a, logged))
        : h('p', { class: 'empty' }, lastQuery ? `No account matches “${lastQuery}”. Try part of the handle or of the email.` : 'No user account yet.'),
    );
  }

  const form = h(
    'form',
    {
      role: 'search',
      class: 'filters',
      'aria-label': 'Find accounts',
      on: {
        submit: (/** @type {SubmitEvent} */ event) => {
          event.preventDefault();
          search();
        },
      },
    },
    q.row,
    h('div', { class: 'field' }, h('button', { type: 'submit' }, 'Search')),
  );
  return {
    node: section('Accounts', form, statusLine, list),
    search,
    /** Draw the list again (after demo credit), with the last search. */
    refresh: () => search(lastQuery),
    leave: () => sequence++,
  };
}

// ------------------------------------------------------------------------------------------------ withdraw a version

/** @param {() => void} logged */
function withdrawSection(logged) {
  const ref = field({
    label: 'Version to withdraw',
    name: 'version',
    placeholder: 'alice/tables@1.0.0',
    hint: 'A published version, as namespace/name@version. It stops being listed at once; calls already admitted still settle.',
    required: true,
    spellcheck: false,
  });
  const reason = field({ label: 'Reason', name: 'reason', hint: 'Required, for the moderation log.', required: true });
  const result = h('div', { 'aria-live': 'polite' });
  const button = actionButton(
    'Withdraw the version',
    async () => {
      setFieldError(ref, '');
      setFieldError(reason, '');
      fill(result);
      const m = parseVersionRef(ref.input.value.trim());
      let bad = false;
      if (!m) {
        setFieldError(ref, 'Write it as namespace/name@version, such as alice/tables@1.0.0.');
        bad = true;
      }
      if (!reason.input.value.trim()) {
        setFieldError(reason, 'Say why: the reason is kept in the moderation log.');
        bad = true;
      }
      if (bad || !m) {
        (m ? reason : ref).input.focus();
        return;
      }
      try {
        /** @type {import('../api.js').Answer<import('../api-types.js').Answer<'moderateVersion'>>} */
        const { body } = await request('POST', adminYankUrl(m.id, m.version), { reason: reason.input.value.trim() });
        fill(
          result,
          notice(
            'ok',
            `Withdrawn: ${body.agent}@${body.version}, ${when(body.yanked_at)}.`,
            body.announced === false ? ' The other gateway processes hide it at their next start.' : '',
          ),
        );
        ref.input.value = '';
        reason.input.value = '';
        logged();
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        // 404 (not listed), 409 (yanked already, or shipped with the gateway): about the version named.
        const rest = refusalAt(e, { '$.reason': reason }, e.status === 404 || e.status === 409 ? ref : null);
        if (rest) fill(result, notice('error', rest));
        (ref.error.hidden ? reason : ref).input.focus();
      }
    },
    { class: 'danger', type: 'submit' },
  );
  const form = h(
    'form',
    { class: 'card', 'aria-label': 'Withdraw a version', on: { submit: (/** @type {SubmitEvent} */ event) => event.preventDefault() } },
    ref.row,
    reason.row,
    h('p', {}, button),
    result,
  );
  return section('Withdraw a version', form);
}

// ------------------------------------------------------------------------------------------------ demo credit

/** @param {() => void} credited */
function creditSection(credited) {
  const account = field({ label: 'Account', name: 'account', hint: 'The handle of a user account.', required: true, spellcheck: false });
  const amount = field({ label: 'Amount (EUR)', name: 'amount', placeholder: '5.00', hint: 'Demo money, more than zero, at most 6 decimals.', required: true });
  amount.input.setAttribute('inputmode', 'decimal');
  const result = h('div', { 'aria-live': 'polite' });
  // One Idempotency-Key per top-up: a retry of the same account and amount (a lost answer) lands once.
  /** @type {{ who: string, value: string, key: string } | null} */
  let pending = null;
  const button = actionButton(
    'Give the credit',
    async () => {
      setFieldError(account, '');
      setFieldError(amount, '');
      fill(result);
      const who = account.input.value.trim();
      const value = typedAmount(amount.input.value);
      let bad = false;
      if (!who) {
        setFieldError(account, 'Name the account to credit.');
        bad = true;
      }
      if (!isPositiveAmount(value)) {
        setFieldError(amount, 'Write an amount above zero, such as 5.00 (at most 6 decimals).');
        bad = true;
      }
      if (bad) {
        (who ? amount : account).input.focus();
        return;
      }
      if (!pending || pending.who !== who || pending.value !== value) pending = { who, value, key: requestKey() };
      try {
        /** @type {import('../api.js').Answer<import('../api-types.js').Answer<'giveDemoCredit'>>} */
        const { status, body } = await request('POST', '/v0/admin/credit', { account: who, amount: value }, { headers: { 'Idempotency-Key': pending.key } });
        const balance = (body.accounts ?? []).find((b) => b.currency === 'EUR') ?? body.accounts?.[0];
        fill(
          result,
          notice(
            'ok',
            status === 200 ? `Already credited: this top-up had landed. ` : `Credited ${money(value, 'EUR')} to ${who}. `,
            balance ? `Their balance is now ${money(balance.balance, balance.currency)}.` : '',
          ),
        );
        pending = null;
        amount.input.value = '';
        credited();
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        const rest = refusalAt(e, { '$.account': account, '$.amount': amount }, e.status === 404 || e.status === 400 ? account : null);
        if (rest) fill(result, notice('error', rest));
        if (e.status >= 400 && e.status < 500) pending = null;
        (account.error.hidden ? amount : account).input.focus();
      }
    },
    { type: 'submit' },
  );
  const form = h(
    'form',
    { class: 'card', 'aria-label': 'Give demo credit', on: { submit: (/** @type {SubmitEvent} */ event) => event.preventDefault() } },
    h('p', {}, 'Demo credit enters from the external demo account, so the journal still sums to zero. It is not real money.'),
    account.row,
    amount.row,
    h('p', {}, button),
    result,
  );
  return section('Demo credit', form);
}

// ------------------------------------------------------------------------------------------------ log

/** @type {Readonly<Record<string, string>>} */
const ACTIONS = { disable_account: 'Account disabled', yank_version: 'Version withdrawn' };

/**
 * A log entry's detail in words; what is not known here, as JSON.
 * @param {unknown} detail
 */
function detailText(detail) {
  if (!detail || typeof detail !== 'object') return detail === null || detail === undefined ? '' : String(detail);
  const d = /** @type {{ keys_revoked?: number, email_blocked?: boolean, yanked?: unknown, by?: string }} */ (detail);
  const parts = [];
  if (d.keys_revoked !== undefined) parts.push(`${d.keys_revoked} key${d.keys_revoked === 1 ? '' : 's'} revoked`);
  if (d.email_blocked) parts.push('email blocked');
  if (Array.isArray(d.yanked) && d.yanked.length) parts.push(`withdrawn: ${d.yanked.join(', ')}`);
  if (d.by) parts.push(`by ${d.by}`);
  const known = new Set(['keys_revoked', 'email_blocked', 'yanked', 'by']);
  const other = Object.fromEntries(Object.entries(detail).filter(([k]) => !known.has(k)));
  if (Object.keys(other).length) parts.push(JSON.stringify(other));
  return parts.join('; ');
}

function logSection() {
  const body = h('div', { id: 'operator-log' }, h('p', { class: 'loading', role: 'status' }, 'Reading the log…'));
  /** @type {LogEntry[]} */
  let entries = [];
  /** @type {string | null} */
  let next = null;
  /** @type {import('../format.js').Column<LogEntry>[]} */
  const columns = [
    { label: 'When', cell: (e) => when(e.created_at) },
    { label: 'Action', cell: (e) => ACTIONS[e.action] ?? e.action },
    { label: 'Target', cell: (e) => h('code', {}, e.target) },
    { label: 'Reason', cell: (e) => e.reason },
    { label: 'Detail', cell: (e) => detailText(e.detail) },
  ];
  const draw = () =>
    fill(
      body,
      table('The moderation log, newest first', columns, entries, { empty: 'Nothing has been moderated yet.' }),
      next
        ? actionButton(
            'Show older entries',
            async () => {
              /** @type {ModerationLog} */
              const more = await get(`/v0/admin/log${qs({ limit: 50, before: next })}`);
              entries = [...entries, ...(more.entries ?? [])];
              next = more.next_before ?? null;
              draw();
            },
            { class: 'secondary' },
          )
        : null,
    );
  return {
    node: section('Moderation log', body),
    async reload() {
      try {
        /** @type {ModerationLog} */
        const first = await get(`/v0/admin/log${qs({ limit: 50 })}`);
        entries = first.entries ?? [];
        next = first.next_before ?? null;
        draw();
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        fill(body, notice('error', 'The moderation log could not be read: ', sentence(e.message), ' Reload the page to try again.'));
      }
    },
  };
}
