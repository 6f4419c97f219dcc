// @ts-check
// Pieces the Publish page's sections share: the GitHub notice, amounts by currency, where a problem's path belongs.

import { h, notice } from '../../dom.js';
import { formatMicros, sum, toMicros } from '../../money.js';
import { gitHubButton } from '../../sign-in.js';

/**
 * @typedef {import('../../dom.js').Field} Field
 * @typedef {import('../../api-types.js').HumanMe} HumanMe
 * @typedef {Readonly<Record<string, string>>} ByCurrency amounts by currency ({EUR: "0.009"})
 */

/**
 * GET /v0/me names the GitHub login an account is linked to (`account.github`), or null: publishing needs one.
 * @param {HumanMe} me
 */
export const githubLinked = (me) => Boolean(me?.account?.github);

/**
 * Publishing needs signing in with GitHub: what an email account does about it.
 * @param {HumanMe} me
 */
export function githubNotice(me) {
  return notice(
    'info',
    h('p', {}, h('strong', {}, 'Publishing needs signing in with GitHub. '), 'This account was made by email, so it is not linked to a GitHub account yet.'),
    h(
      'p',
      {},
      'Sign in with GitHub once: if GitHub shows the same verified email',
      me?.account?.email ? ` (${me.account.email})` : '',
      ', this account is linked, keeps its handle, its mandates and its credit, and can publish. Holon never keeps your GitHub token.',
    ),
    h('p', {}, gitHubButton('Sign in with GitHub')),
  );
}

/**
 * Amounts per currency ({EUR: "0.009"}) in words: "0.009 EUR"; several currencies are never added together.
 * @param {ByCurrency | null | undefined} byCurrency
 */
export function amounts(byCurrency) {
  const entries = Object.entries(byCurrency ?? {}).filter(([, v]) => toMicros(v) !== 0n);
  if (!entries.length) return 'nothing yet';
  return entries.map(([currency, v]) => `${formatMicros(toMicros(v))} ${currency}`).join(' and ');
}

/**
 * Σ of several {currency: amount} maps, exactly (BigInt micro-units).
 * @param {Array<ByCurrency | null | undefined>} maps
 * @returns {Record<string, string>}
 */
export function addAmounts(maps) {
  /** @type {Map<string, string[]>} */
  const byCurrency = new Map();
  for (const m of maps) for (const [c, v] of Object.entries(m ?? {})) byCurrency.set(c, [...(byCurrency.get(c) ?? []), v]);
  return Object.fromEntries([...byCurrency].map(([c, vs]) => [c, formatMicros(sum(vs))]));
}

/**
 * Where a problem path of the draft request, or of the manifest, belongs among the form's fields.
 * @param {Array<[string, Field]>} pairs
 * @returns {(path: unknown) => Field | null}
 */
export function fieldMatcher(pairs) {
  return (path) => {
    const p = String(path ?? '');
    for (const [prefix, f] of pairs) if (p === prefix || p.startsWith(`${prefix}.`) || p.startsWith(`${prefix}[`)) return f;
    return null;
  };
}
