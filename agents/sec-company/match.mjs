// holon-labs/sec-company: which company of EDGAR's ticker map a name or ticker means. Pure; the rule is the one
// holon.yaml's description states, step by step.
import { toolError } from '../tool-kit.mjs';

/** How many candidates an ambiguous_company message names. */
const CANDIDATES_SHOWN = 5;

/** A ticker as compared: upper case, `.` read as `-` (EDGAR writes class shares as BRK-B). */
export function tickerKey(text) {
  return text.trim().toUpperCase().replaceAll('.', '-');
}

/**
 * A name as compared: NFKC, lower case, apostrophes dropped, every other run of characters that are not letters or
 * digits one space, no space at either end ("Apple Inc." → "apple inc", "McDonald's Corp" → "mcdonalds corp").
 */
export function nameKey(text) {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/['’]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/**
 * The entry of `companies` (the ticker map: `{cik, ticker, title, tickerKey, nameKey}`, EDGAR's order) that `query`
 * names, with how: `{company, matchedBy}`, `matchedBy` one of `ticker`, `name`, `prefix`, `contains`. The first step
 * that finds anything decides: one company (one CIK, whatever its number of tickers) is the answer, several are
 * ambiguous_company; no step finding anything is unknown_company.
 */
export function findCompany(companies, query) {
  const ticker = tickerKey(query);
  const byTicker = companies.find((c) => c.tickerKey === ticker);
  if (byTicker) return { company: byTicker, matchedBy: 'ticker' };
  const name = nameKey(query);
  if (name !== '') {
    const steps = [
      ['name', (key) => key === name],
      ['prefix', (key) => key.startsWith(`${name} `)],
      ['contains', (key) => ` ${key} `.includes(` ${name} `)],
    ];
    for (const [matchedBy, test] of steps) {
      const found = distinctCompanies(companies.filter((c) => test(c.nameKey)));
      if (found.length === 1) return { company: found[0], matchedBy };
      if (found.length > 1) throw ambiguous(query, found);
    }
  }
  throw toolError('unknown_company', `EDGAR lists no company whose ticker or name is ${JSON.stringify(shorten(query))}`);
}

/** One entry per CIK, the first in the map's order (a company listed with several tickers is one company). */
function distinctCompanies(entries) {
  const seen = new Map();
  for (const e of entries) if (!seen.has(e.cik)) seen.set(e.cik, e);
  return [...seen.values()];
}

function ambiguous(query, found) {
  const named = found.slice(0, CANDIDATES_SHOWN).map((c) => `${c.title} (${c.ticker})`);
  const more = found.length > CANDIDATES_SHOWN ? ` and ${found.length - CANDIDATES_SHOWN} more` : '';
  return toolError(
    'ambiguous_company',
    `${JSON.stringify(shorten(query))} matches ${found.length} companies: ${named.join(', ')}${more}; ask by ticker or by the full name`,
  );
}

function shorten(text) {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
