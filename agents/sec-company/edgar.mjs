// holon-labs/sec-company: EDGAR's two JSON documents, fetched politely (SEC fair access: a User-Agent naming a
// contact, at most 10 requests per second), cached for a day, and checked before anything reads them.
import { fetchText, parseJson, toolError } from '../tool-kit.mjs';

/** At most this many requests start in any window of WINDOW_MS: 10 per second, with 50 ms kept for timers and the network. */
const MAX_REQUESTS = 10;
const WINDOW_MS = 1050;
/** How long an answer is reused, and how many are kept (the ticker map and the most recent submissions documents). */
export const CACHE_TTL_MS = 24 * 60 * 60_000;
const CACHE_ENTRIES = 128;
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

const ACCESSION = /^[0-9]{10}-[0-9]{2}-[0-9]{6}$/;
const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
const DOCUMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*(?:\/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$/;

// ---------------------------------------------------------------------------------- one limiter per process

/** The scheduled start times (performance.now()) of the last MAX_REQUESTS requests, oldest first. */
const starts = [];

/** Waits for this request's turn: it starts no sooner than WINDOW_MS after the request MAX_REQUESTS before it. */
async function turn(signal) {
  const now = performance.now();
  const at = starts.length < MAX_REQUESTS ? now : Math.max(now, starts[starts.length - MAX_REQUESTS] + WINDOW_MS);
  starts.push(at);
  if (starts.length > MAX_REQUESTS) starts.shift();
  if (at > now) await sleep(Math.ceil(at - now), signal);
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal.removeEventListener('abort', done);
      clearTimeout(timer);
      if (signal.aborted) reject(signal.reason);
      else resolve();
    }
    signal.addEventListener('abort', done);
  });
}

// ------------------------------------------------------------------------------- the cache and shared requests

/** url → {value, expires}, least recently used first. */
const cache = new Map();
/** url → {promise, controller, waiters}: one request per URL at a time, whoever asks for it meanwhile. */
const inflight = new Map();

/**
 * The checked value of the JSON document at `url`: from the cache (a day old at most), else fetched through the
 * limiter and checked by `read(json)` (undefined = not the document expected); null when EDGAR answers 404 (not
 * cached). `settings` = {contact, timeoutMs}.
 * Concurrent asks for one URL share its request, which is cancelled once every caller waiting for it has gone.
 */
export async function edgarDocument(url, read, settings, signal) {
  const hit = cache.get(url);
  if (hit && hit.expires > Date.now()) {
    cache.delete(url);
    cache.set(url, hit);
    return hit.value;
  }
  cache.delete(url);
  let entry = inflight.get(url);
  if (!entry || entry.controller.signal.aborted) {
    const controller = new AbortController();
    const promise = request(url, read, settings, controller.signal).finally(() => {
      if (inflight.get(url) === entry) inflight.delete(url);
    });
    promise.catch(() => {}); // a request nobody waits for any more still settles
    entry = { promise, controller, waiters: 0 };
    inflight.set(url, entry);
  }
  return wait(entry, signal);
}

/** The shared request's answer, or this caller's cancellation; the last caller to leave cancels the request. */
function wait(entry, signal) {
  entry.waiters += 1;
  return new Promise((resolve, reject) => {
    const leave = () => {
      entry.waiters -= 1;
      if (entry.waiters === 0) entry.controller.abort(signal.reason);
      reject(signal.reason);
    };
    if (signal?.aborted) return leave();
    signal?.addEventListener('abort', leave, { once: true });
    entry.promise.then(resolve, reject).finally(() => signal?.removeEventListener('abort', leave));
  });
}

async function request(url, read, { contact, timeoutMs }, signal) {
  await turn(signal);
  const fail = (why) => toolError('edgar_unavailable', `EDGAR ${why}`);
  const init = { headers: { 'user-agent': `Holon ${contact}`, accept: 'application/json' } };
  const answer = await fetchText(url, init, { signal, timeoutMs, maxBytes: MAX_ANSWER_BYTES, fail });
  if (answer.status === 404) return null;
  if (answer.status === 429) throw fail('is limiting the requests of this host (429 Too Many Requests); try again in a few minutes');
  if (answer.status === 403) throw fail('refused the request (403): it may not accept this host or its User-Agent');
  if (!answer.ok) throw fail(`answered ${answer.status}`);
  const json = parseJson(answer.text);
  if (json === undefined) throw fail('answered with something that is not JSON');
  const value = read(json);
  if (value === undefined) throw fail('answered with JSON that is not the document expected');
  cache.set(url, { value, expires: Date.now() + CACHE_TTL_MS });
  while (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value);
  return value;
}

// ----------------------------------------------------------------------------------------- the two documents

/**
 * `/files/company_tickers.json` → `[{cik, ticker, title}]` in EDGAR's order; undefined unless it is a non-empty
 * object of `{cik_str: positive integer, ticker: string, title: string}`.
 */
export function readTickerMap(json) {
  if (!isRecord(json)) return undefined;
  const out = [];
  for (const entry of Object.values(json)) {
    if (!isRecord(entry) || !isCik(entry.cik_str) || !isText(entry.ticker) || !isText(entry.title)) return undefined;
    out.push({ cik: entry.cik_str, ticker: entry.ticker, title: entry.title });
  }
  return out.length > 0 ? out : undefined;
}

/**
 * `/submissions/CIK##########.json` of `cik` → `{name, tickers, filings: [{form, date, accession, document}]}`
 * (EDGAR's recent filings, in its order); undefined unless it names that CIK and its `filings.recent` columns are
 * arrays of one length holding well-formed values (`document` may be "").
 */
export function readSubmissions(json, cik) {
  if (!isRecord(json) || !isText(json.name) || Number(json.cik) !== cik) return undefined;
  const tickers = json.tickers ?? [];
  if (!Array.isArray(tickers) || !tickers.every(isText)) return undefined;
  const recent = json.filings?.recent;
  if (!isRecord(recent)) return undefined;
  const { form, filingDate, accessionNumber, primaryDocument } = recent;
  const columns = [form, filingDate, accessionNumber, primaryDocument];
  if (!columns.every(Array.isArray) || columns.some((c) => c.length !== form.length)) return undefined;
  const filings = [];
  for (let i = 0; i < form.length; i++) {
    const row = { form: form[i], date: filingDate[i], accession: accessionNumber[i], document: primaryDocument[i] };
    if (!isText(row.form) || !isString(row.date) || !DATE.test(row.date) || !isString(row.accession) || !ACCESSION.test(row.accession)) return undefined;
    if (!isString(row.document) || (row.document !== '' && !DOCUMENT.test(row.document))) return undefined;
    filings.push(row);
  }
  return { name: json.name, tickers, filings };
}

function isRecord(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isString(value) {
  return typeof value === 'string';
}

function isText(value) {
  return typeof value === 'string' && value.trim() !== '';
}

function isCik(value) {
  return Number.isSafeInteger(value) && value > 0 && value < 1e10;
}
