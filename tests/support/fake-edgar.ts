/**
 * A fake SEC EDGAR on loopback (node:http) for holon-labs/sec-company, with EDGAR's own shapes:
 *   files  GET /www/files/company_tickers.json          `{"0": {cik_str, ticker, title}, …}` (HOLON_SEC_FILES_URL = `<url>/www`)
 *   data   GET /data/submissions/CIK##########.json     `{cik, name, tickers, filings: {recent: {<column>: [...]}}}`,
 *                                                       columnar as on data.sec.gov; 404 for a CIK it does not know
 *                                                       (HOLON_SEC_URL = `<url>/data`)
 * The two live under different prefixes, so the two settings are really two. Every request is recorded (path,
 * User-Agent, arrival time on performance.now()). Either endpoint can be made to fail: 500, 404, hang (never
 * answered; closed with the server), `not_json` (an HTML page) or `wrong_shape` (JSON, not the document).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

interface FakeFiling {
  form: string;
  date: string;
  accession: string;
  document: string;
  reportDate?: string;
}

export interface FakeCompany {
  cik: number;
  title: string;
  /** The ticker map lists the company once per ticker, in this order. */
  tickers: string[];
  /** The submissions' name when it differs from the map's title (a company renamed since). */
  name?: string;
  /** Newest first, as EDGAR lists them; none = 404 for its submissions. */
  filings?: FakeFiling[];
}

type EdgarEndpoint = 'tickers' | 'submissions';
type EdgarFailure = 500 | 404 | 'hang' | 'not_json' | 'wrong_shape';

interface EdgarRequest {
  endpoint: EdgarEndpoint | 'other';
  path: string;
  userAgent: string | undefined;
  /** performance.now() when the request arrived. */
  at: number;
}

export interface FakeEdgar {
  url: string;
  /** HOLON_SEC_URL */
  dataUrl: string;
  /** HOLON_SEC_FILES_URL */
  filesUrl: string;
  requests: EdgarRequest[];
  /** Hanging requests whose client went away before an answer. */
  readonly abandoned: number;
  /** Make an endpoint fail (undefined: answer again). */
  fail(endpoint: EdgarEndpoint, mode: EdgarFailure | undefined): void;
  /** The agent host's environment for this fake, with `contact` as HOLON_SEC_CONTACT. */
  env(contact?: string): Record<string, string>;
  stop(): Promise<void>;
}

const filing = (form: string, date: string, accession: string, document: string, reportDate = ''): FakeFiling => ({
  form,
  date,
  accession,
  document,
  reportDate,
});

/** Apple's recent filings as EDGAR listed them in late 2024 (12, newest first; one without a primary document). */
const APPLE_FILINGS: FakeFiling[] = [
  filing('10-K', '2024-11-01', '0000320193-24-000123', 'aapl-20240928.htm', '2024-09-28'),
  filing('8-K', '2024-10-31', '0000320193-24-000120', 'aapl-20241031.htm', '2024-10-31'),
  filing('4', '2024-10-17', '0000320193-24-000118', 'xslF345X05/wk-form4_1729204215.xml', '2024-10-15'),
  filing('SC 13G/A', '2024-10-08', '0000320193-24-000117', ''),
  filing('10-Q', '2024-08-02', '0000320193-24-000081', 'aapl-20240629.htm', '2024-06-29'),
  filing('8-K', '2024-08-01', '0000320193-24-000080', 'aapl-20240801.htm', '2024-08-01'),
  filing('10-Q', '2024-05-03', '0000320193-24-000069', 'aapl-20240330.htm', '2024-03-30'),
  filing('8-K', '2024-05-02', '0000320193-24-000067', 'aapl-20240502.htm', '2024-05-02'),
  filing('10-Q', '2024-02-02', '0000320193-24-000006', 'aapl-20231230.htm', '2023-12-30'),
  filing('DEF 14A', '2024-01-11', '0001308179-24-000010', 'laapl2024_def14a.htm'),
  filing('10-K', '2023-11-03', '0000320193-23-000106', 'aapl-20230930.htm', '2023-09-30'),
  filing('8-K', '2023-11-02', '0000320193-23-000104', 'aapl-20231102.htm', '2023-11-02'),
];

/** A few real companies (Apple and a namesake, a company with two tickers, an apostrophe), and 40 made-up ones. */
export const FAKE_COMPANIES: FakeCompany[] = [
  { cik: 320193, title: 'Apple Inc.', tickers: ['AAPL'], filings: APPLE_FILINGS },
  { cik: 789019, title: 'MICROSOFT CORP', tickers: ['MSFT'], filings: [filing('10-Q', '2024-10-30', '0000950170-24-118967', 'msft-20240930.htm')] },
  {
    cik: 1067983,
    title: 'BERKSHIRE HATHAWAY INC',
    tickers: ['BRK-B', 'BRK-A'],
    filings: [filing('10-Q', '2024-11-04', '0000950170-24-121234', 'brka-20240930.htm')],
  },
  {
    cik: 1418121,
    title: 'Apple Hospitality REIT, Inc.',
    tickers: ['APLE'],
    filings: [filing('10-Q', '2024-11-04', '0001418121-24-000041', 'aple-20240930.htm')],
  },
  { cik: 63908, title: "MCDONALD'S CORP", tickers: ['MCD'], filings: [filing('8-K', '2024-10-29', '0000063908-24-000061', 'mcd-20241029.htm')] },
  // Renamed: the map still has the old title, the submissions the new name. Listed out of date order.
  {
    cik: 1018724,
    title: 'AMAZON COM INC',
    name: 'AMAZON.COM, INC.',
    tickers: ['AMZN'],
    filings: [
      filing('4', '2024-10-01', '0001018724-24-000160', 'xslF345X05/wk-form4_1727816542.xml'),
      filing('10-Q', '2024-11-01', '0001018724-24-000161', 'amzn-20240930.htm'),
      filing('8-K', '2024-10-31', '0001018724-24-000158', 'amzn-20241031.htm'),
    ],
  },
  // In the map, but EDGAR has no submissions for it (a 404).
  { cik: 999999, title: 'Ghost Holdings Corp', tickers: ['GHST'] },
  ...Array.from({ length: 40 }, (_, i): FakeCompany => {
    const n = String(i + 1).padStart(2, '0');
    const cik = 9_000_000 + i + 1;
    const accession = (k: number) => `${String(cik).padStart(10, '0')}-24-${String(k).padStart(6, '0')}`;
    return {
      cik,
      title: `Testco ${n} Industries Inc`,
      tickers: [`TC${n}`],
      filings: [filing('10-K', '2024-03-01', accession(2), `tc${n}-10k.htm`), filing('8-K', '2024-01-15', accession(1), `tc${n}-8k.htm`)],
    };
  }),
];

/** `{"0": {cik_str, ticker, title}, …}`: one entry per ticker. */
function tickerMap(companies: FakeCompany[]): Record<string, { cik_str: number; ticker: string; title: string }> {
  const entries = companies.flatMap((c) => c.tickers.map((ticker) => ({ cik_str: c.cik, ticker, title: c.title })));
  return Object.fromEntries(entries.map((e, i) => [String(i), e]));
}

/** data.sec.gov's submissions document: the recent filings as parallel columns. */
function submissions(c: FakeCompany, filings: FakeFiling[]): Record<string, unknown> {
  const column = <T>(f: (x: FakeFiling) => T) => filings.map(f);
  return {
    cik: String(c.cik),
    entityType: 'operating',
    name: c.name ?? c.title,
    tickers: c.tickers,
    exchanges: c.tickers.map(() => 'Nasdaq'),
    filings: {
      recent: {
        accessionNumber: column((f) => f.accession),
        filingDate: column((f) => f.date),
        reportDate: column((f) => f.reportDate ?? ''),
        acceptanceDateTime: column((f) => `${f.date}T16:30:00.000Z`),
        form: column((f) => f.form),
        size: column(() => 123456),
        isXBRL: column((f) => (f.form.startsWith('10-') ? 1 : 0)),
        primaryDocument: column((f) => f.document),
        primaryDocDescription: column((f) => f.form),
      },
      files: [],
    },
  };
}

export async function startFakeEdgar(companies: FakeCompany[] = FAKE_COMPANIES): Promise<FakeEdgar> {
  const requests: EdgarRequest[] = [];
  const failures = new Map<EdgarEndpoint, EdgarFailure>();
  const byCik = new Map(companies.map((c) => [c.cik, c]));
  let abandoned = 0;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const submission = /^\/data\/submissions\/CIK([0-9]{10})\.json$/.exec(path);
    const endpoint: EdgarRequest['endpoint'] = path === '/www/files/company_tickers.json' ? 'tickers' : submission ? 'submissions' : 'other';
    requests.push({ endpoint, path, userAgent: req.headers['user-agent'], at: performance.now() });
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const failure = endpoint === 'other' ? undefined : failures.get(endpoint);
    if (failure === 'hang') return void res.on('close', () => (abandoned += 1));
    if (failure === 500) return json(500, { message: 'Internal Server Error' });
    if (failure === 404 || endpoint === 'other') return json(404, { message: 'Not Found' });
    if (failure === 'not_json') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end('<html><body>Your request has been identified as part of a network of automated tools</body></html>');
    }
    if (failure === 'wrong_shape') return json(200, endpoint === 'tickers' ? { fields: ['cik', 'name'], data: 'no' } : { cik: 'x', filings: {} });
    if (endpoint === 'tickers') return json(200, tickerMap(companies));
    const company = byCik.get(Number(submission![1]));
    if (!company?.filings) return json(404, { message: 'Not Found' });
    return json(200, submissions(company, company.filings));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dataUrl = `${url}/data`;
  const filesUrl = `${url}/www`;
  return {
    url,
    dataUrl,
    filesUrl,
    requests,
    get abandoned() {
      return abandoned;
    },
    fail: (endpoint, mode) => void (mode === undefined ? failures.delete(endpoint) : failures.set(endpoint, mode)),
    env: (contact = 'ops@holon.example') => ({ HOLON_SEC_CONTACT: contact, HOLON_SEC_URL: dataUrl, HOLON_SEC_FILES_URL: filesUrl }),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
