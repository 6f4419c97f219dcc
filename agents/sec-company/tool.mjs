// holon-labs/sec-company: a company's CIK, name and most recent filings from SEC EDGAR, billed per run.
// The rules (matching a name, which filings, the document URL) are stated in holon.yaml's description.
import { toolError } from '../tool-kit.mjs';
import { edgarDocument, readSubmissions, readTickerMap } from './edgar.mjs';
import { findCompany, nameKey, tickerKey } from './match.mjs';

const DEFAULT_LIMIT = 10;
const DEFAULT_TIMEOUT_MS = 10_000;
const DATA_URL = 'https://data.sec.gov';
const FILES_URL = 'https://www.sec.gov';
/**
 * An email address as the HTML standard defines a valid one, with a dot in its domain: what the SEC can write to.
 * shared/platform/config.ts refuses to start a production gateway listing this agent without one (the same pattern).
 */
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export default async function run(input, { signal, env = process.env } = {}) {
  if (typeof input?.company !== 'string') throw new TypeError('input.company must be a string');
  const settings = readSettings(env);
  const map = await edgarDocument(`${settings.filesUrl}/files/company_tickers.json`, indexedTickerMap, settings, signal);
  if (map === null) throw toolError('edgar_unavailable', 'EDGAR answered 404 for its ticker map');
  const { company, matchedBy } = findCompany(map, input.company);

  const cik = String(company.cik).padStart(10, '0');
  const read = (json) => readSubmissions(json, company.cik);
  const submissions = await edgarDocument(`${settings.dataUrl}/submissions/CIK${cik}.json`, read, settings, signal);
  if (submissions === null) throw toolError('unknown_company', `EDGAR has no filings for ${company.title} (CIK ${cik})`);

  const forms = input.forms ? new Set(input.forms.map(formKey)) : undefined;
  const filings = submissions.filings
    .filter((f) => !forms || forms.has(formKey(f.form)))
    .sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0)) // stable: EDGAR's order within a day
    .slice(0, input.limit ?? DEFAULT_LIMIT)
    .map((f) => ({ form: f.form, date: f.date, accession_number: f.accession, document_url: documentUrl(settings.filesUrl, company.cik, f) }));
  return {
    output: {
      cik,
      name: submissions.name,
      tickers: submissions.tickers.length > 0 ? submissions.tickers : [company.ticker],
      matched_by: matchedBy,
      filings,
    },
  };
}

/** The ticker map as findCompany reads it: each entry with the keys it compares, computed once per map. */
function indexedTickerMap(json) {
  return readTickerMap(json)?.map((c) => ({ ...c, tickerKey: tickerKey(c.ticker), nameKey: nameKey(c.title) }));
}

function formKey(form) {
  return form.trim().toUpperCase();
}

/** EDGAR's archive address of a filing's primary document; its index page when the filing names none. */
function documentUrl(filesUrl, cik, filing) {
  const folder = `${filesUrl}/Archives/edgar/data/${cik}/${filing.accession.replaceAll('-', '')}`;
  return `${folder}/${filing.document === '' ? `${filing.accession}-index.htm` : filing.document}`;
}

// ---------------------------------------------------------------------------------------------- settings

/** The operator's settings, or not_configured saying which one is missing or wrong. */
function readSettings(env) {
  const contact = env.HOLON_SEC_CONTACT?.trim();
  if (!contact) {
    throw toolError('not_configured', 'this agent has no SEC contact (HOLON_SEC_CONTACT): EDGAR asks for an email address in the User-Agent');
  }
  if (contact.length > 254 || !EMAIL.test(contact)) {
    throw toolError('not_configured', 'HOLON_SEC_CONTACT is not an email address: EDGAR asks for one the SEC can reach in the User-Agent');
  }
  return {
    contact,
    dataUrl: baseUrl('HOLON_SEC_URL', env.HOLON_SEC_URL, DATA_URL),
    filesUrl: baseUrl('HOLON_SEC_FILES_URL', env.HOLON_SEC_FILES_URL, FILES_URL),
    timeoutMs: timeoutMs(env.HOLON_SEC_TIMEOUT_MS),
  };
}

function baseUrl(name, value, fallback) {
  const text = value?.trim() || fallback;
  let url;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.username || url.password || url.search || url.hash) {
    throw toolError('not_configured', `${name} must be an http(s) URL without credentials or query, such as ${fallback}`);
  }
  return text.replace(/\/+$/, '');
}

function timeoutMs(value) {
  const text = value?.trim();
  if (!text) return DEFAULT_TIMEOUT_MS;
  const ms = Number(text);
  if (!/^[0-9]+$/.test(text) || ms < 100 || ms > 60_000) {
    throw toolError('not_configured', 'HOLON_SEC_TIMEOUT_MS must be an integer from 100 to 60000');
  }
  return ms;
}
