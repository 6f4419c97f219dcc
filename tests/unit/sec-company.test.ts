/**
 * holon-labs/sec-company (agents/sec-company), imported directly: the rule that finds a company, the checks on
 * EDGAR's two documents, the manifest's examples against a fake EDGAR on loopback (tests/support/fake-edgar.ts),
 * the day-long cache on a moved clock, and the gateway's side: listed only with HOLON_SEC_CONTACT, which production
 * requires while the agent is listed. The host over MCP: tests/integration/sec-company.test.ts.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseManifest } from '../../shared/core/manifest/index.js';
import { ConfigError, loadConfig } from '../../shared/platform/config.js';
import { createLogger } from '../../shared/platform/log.js';
import { loadDevRegistry } from '../../shared/registry/dev-registry.js';
import { FAKE_COMPANIES, startFakeEdgar, type FakeEdgar } from '../support/fake-edgar.js';

interface Company {
  cik: number;
  ticker: string;
  title: string;
  tickerKey: string;
  nameKey: string;
}
interface MatchModule {
  findCompany: (companies: Company[], query: string) => { company: Company; matchedBy: string };
  nameKey: (text: string) => string;
  tickerKey: (text: string) => string;
}
interface EdgarModule {
  readTickerMap: (json: unknown) => Array<{ cik: number; ticker: string; title: string }> | undefined;
  readSubmissions: (json: unknown, cik: number) => { name: string; tickers: string[]; filings: unknown[] } | undefined;
  CACHE_TTL_MS: number;
}
interface Output {
  cik: string;
  name: string;
  tickers: string[];
  matched_by: string;
  filings: Array<{ form: string; date: string; accession_number: string; document_url: string }>;
}
interface ToolModule {
  default: (input: unknown, ctx?: { signal?: AbortSignal; env?: Record<string, string | undefined> }) => Promise<{ output: Output }>;
}

const match = (await import(new URL('../../agents/sec-company/match.mjs', import.meta.url).href)) as MatchModule;
const edgar = (await import(new URL('../../agents/sec-company/edgar.mjs', import.meta.url).href)) as EdgarModule;
const tool = (await import(new URL('../../agents/sec-company/tool.mjs', import.meta.url).href)) as ToolModule;
const AGENTS = fileURLToPath(new URL('../../agents', import.meta.url));
const manifest = parseManifest(readFileSync(new URL('../../agents/sec-company/holon.yaml', import.meta.url), 'utf8'), 'yaml');
if (!manifest.ok) throw new Error(`agents/sec-company/holon.yaml is invalid: ${JSON.stringify(manifest.problems)}`);

/** The fake's ticker map, as the tool indexes it. */
const MAP: Company[] = FAKE_COMPANIES.flatMap((c) =>
  c.tickers.map((ticker) => ({ cik: c.cik, ticker, title: c.title, tickerKey: match.tickerKey(ticker), nameKey: match.nameKey(c.title) })),
);
const find = (query: string) => {
  const { company, matchedBy } = match.findCompany(MAP, query);
  return [company.cik, matchedBy];
};
const refusal = (query: string) => {
  try {
    match.findCompany(MAP, query);
  } catch (e) {
    return { code: (e as { code: string }).code, message: (e as Error).message };
  }
  throw new Error(`${query} was found`);
};

describe('finding the company: ticker, then name, then prefix, then contains', () => {
  it('a ticker in any letter case, "." read as "-"', () => {
    expect(find('AAPL')).toEqual([320193, 'ticker']);
    expect(find('  aapl ')).toEqual([320193, 'ticker']);
    expect(find('brk.b')).toEqual([1067983, 'ticker']);
    expect(find('BRK-A')).toEqual([1067983, 'ticker']);
  });

  it('names are compared normalized: case, punctuation, apostrophes, spacing, NFKC', () => {
    expect(match.nameKey('Apple Inc.')).toBe('apple inc');
    expect(match.nameKey('  McDonald’s  Corp ')).toBe('mcdonalds corp');
    expect(match.nameKey('ＡＭＡＺＯＮ.COM, Inc.')).toBe('amazon com inc');
    expect(find('apple inc')).toEqual([320193, 'name']);
    expect(find('APPLE, INC.')).toEqual([320193, 'name']);
    expect(find("mcdonald's corp")).toEqual([63908, 'name']);
  });

  it('a prefix of whole words, then whole words anywhere; a company with two tickers is one company', () => {
    expect(find('microsoft')).toEqual([789019, 'prefix']);
    expect(find('Berkshire')).toEqual([1067983, 'prefix']);
    expect(find('hathaway')).toEqual([1067983, 'contains']);
    expect(find('hospitality reit')).toEqual([1418121, 'contains']);
    expect(refusal('micro').code).toBe('unknown_company'); // not a whole word of MICROSOFT CORP
  });

  it('a ticker wins over a name, a name over a prefix', () => {
    const map = [
      { cik: 1, ticker: 'APPLE', title: 'Pear Corp' },
      { cik: 2, ticker: 'PPL', title: 'Apple' },
      { cik: 3, ticker: 'APL', title: 'Apple Farms' },
    ].map((c) => ({ ...c, tickerKey: c.ticker, nameKey: match.nameKey(c.title) }));
    expect(match.findCompany(map, 'apple').company.cik).toBe(1);
    expect(match.findCompany(map.slice(1), 'apple')).toMatchObject({ company: { cik: 2 }, matchedBy: 'name' });
    expect(match.findCompany(map.slice(2), 'apple')).toMatchObject({ company: { cik: 3 }, matchedBy: 'prefix' });
  });

  it('several companies at the deciding step: ambiguous_company naming up to five', () => {
    expect(refusal('apple')).toEqual({
      code: 'ambiguous_company',
      message: '"apple" matches 2 companies: Apple Inc. (AAPL), Apple Hospitality REIT, Inc. (APLE); ask by ticker or by the full name',
    });
    const many = refusal('industries');
    expect(many.code).toBe('ambiguous_company');
    expect(many.message).toMatch(/^"industries" matches 40 companies: Testco 01 Industries Inc \(TC01\), .*Testco 05 Industries Inc \(TC05\) and 35 more;/);
  });

  it('nothing found, or nothing left to compare: unknown_company', () => {
    expect(refusal('No Such Company Anywhere')).toEqual({
      code: 'unknown_company',
      message: 'EDGAR lists no company whose ticker or name is "No Such Company Anywhere"',
    });
    expect(refusal('!!!').code).toBe('unknown_company');
    expect(refusal('   ').code).toBe('unknown_company');
  });
});

describe("EDGAR's documents are checked before they are read", () => {
  const recent = { form: ['10-K'], filingDate: ['2024-11-01'], accessionNumber: ['0000320193-24-000123'], primaryDocument: ['aapl-20240928.htm'] };
  const doc = (over: Record<string, unknown> = {}, columns: Record<string, unknown> = {}) => ({
    cik: '320193',
    name: 'Apple Inc.',
    tickers: ['AAPL'],
    filings: { recent: { ...recent, ...columns } },
    ...over,
  });

  it('the ticker map: a non-empty object of {cik_str, ticker, title}', () => {
    expect(edgar.readTickerMap({ 0: { cik_str: 320193, ticker: 'AAPL', title: 'Apple Inc.' } })).toEqual([
      { cik: 320193, ticker: 'AAPL', title: 'Apple Inc.' },
    ]);
    for (const bad of [{}, [], null, 'x', { 0: { cik_str: '320193', ticker: 'AAPL', title: 'Apple Inc.' } }, { 0: { cik_str: 1, ticker: '', title: 'x' } }]) {
      expect(edgar.readTickerMap(bad), JSON.stringify(bad)).toBeUndefined();
    }
  });

  it('the submissions: that CIK, a name, columns of one length, well-formed values', () => {
    expect(edgar.readSubmissions(doc(), 320193)).toEqual({
      name: 'Apple Inc.',
      tickers: ['AAPL'],
      filings: [{ form: '10-K', date: '2024-11-01', accession: '0000320193-24-000123', document: 'aapl-20240928.htm' }],
    });
    expect(edgar.readSubmissions(doc({}, { primaryDocument: [''] }), 320193)?.filings).toHaveLength(1);
    expect(edgar.readSubmissions(doc({}, { primaryDocument: ['xslF345X05/wk-form4_1.xml'] }), 320193)?.filings).toHaveLength(1);
    const bad: Array<[string, unknown]> = [
      ['another CIK', doc({ cik: '789019' })],
      ['no name', doc({ name: undefined })],
      ['no recent filings', doc({ filings: {} })],
      ['columns of two lengths', doc({}, { form: ['10-K', '8-K'] })],
      ['a column missing', doc({}, { primaryDocument: undefined })],
      ['a malformed accession number', doc({}, { accessionNumber: ['320193-24-123'] })],
      ['a malformed date', doc({}, { filingDate: ['1 Nov 2024'] })],
      ['a document climbing out of the folder', doc({}, { primaryDocument: ['../../x.htm'] })],
      ['a document with a query', doc({}, { primaryDocument: ['a.htm?x=1'] })],
      ['tickers not strings', doc({ tickers: [1] })],
    ];
    for (const [what, json] of bad) expect(edgar.readSubmissions(json, 320193), what).toBeUndefined();
  });
});

describe('the tool against a fake EDGAR', () => {
  let fake: FakeEdgar;
  beforeAll(async () => {
    fake = await startFakeEdgar();
  });
  afterAll(() => fake.stop());
  afterEach(() => void vi.useRealTimers());

  it("the manifest's examples are what the tool answers (document URLs on HOLON_SEC_FILES_URL)", async () => {
    expect(manifest.manifest.interface.examples.length).toBe(3);
    for (const example of manifest.manifest.interface.examples) {
      const got = await tool.default(example.input, { env: fake.env() }).then(
        (r) => ({ output: JSON.parse(JSON.stringify(r.output).replaceAll(fake.filesUrl, 'https://www.sec.gov')) }),
        (e: { code: string }) => ({ error: e.code }),
      );
      expect(got, JSON.stringify(example.input)).toEqual(example.error !== undefined ? { error: example.error } : { output: example.output });
    }
    expect(manifest.manifest.pricing).toMatchObject({ model: 'per_run', currency: 'EUR' });
  });

  it('answers from its cache for a day, then asks EDGAR again', async () => {
    const cold = await startFakeEdgar(); // new URLs: nothing cached for them
    try {
      await dayLong(cold);
    } finally {
      await cold.stop();
    }
  });
});

async function dayLong(fake: FakeEdgar): Promise<void> {
  vi.useFakeTimers({ toFake: ['Date'] });
  const env = fake.env();
  const paths = () => fake.requests.map((r) => r.endpoint);
  await tool.default({ company: 'MSFT' }, { env });
  expect(paths()).toEqual(['tickers', 'submissions']);
  vi.setSystemTime(Date.now() + edgar.CACHE_TTL_MS - 60_000);
  await tool.default({ company: 'MSFT' }, { env });
  expect(paths()).toHaveLength(2);
  vi.setSystemTime(Date.now() + 120_000);
  expect((await tool.default({ company: 'MSFT' }, { env })).output.name).toBe('MICROSOFT CORP');
  expect(paths()).toEqual(['tickers', 'submissions', 'tickers', 'submissions']);
}

describe('the gateway lists it only with HOLON_SEC_CONTACT, and production requires one while it is listed', () => {
  const log = createLogger('registry', 'silent');
  const listed = async (options: { exclude?: string[]; env: Record<string, string> }) =>
    (await loadDevRegistry([AGENTS], { log, ...options })).registry.list().some((a) => a.manifest.id === 'holon-labs/sec-company');

  it('the registry: not without the contact, not when excluded, listed with it', async () => {
    expect(await listed({ exclude: [], env: {} })).toBe(false);
    expect(await listed({ exclude: [], env: { HOLON_SEC_CONTACT: '  ' } })).toBe(false);
    expect(await listed({ env: { HOLON_SEC_CONTACT: 'ops@holon.example' } })).toBe(true);
    expect(await listed({ exclude: ['holon-labs/sec-company'], env: { HOLON_SEC_CONTACT: 'ops@holon.example' } })).toBe(false);
    expect(await listed({ exclude: ['holon-labs/sec-company@1.0.0'], env: { HOLON_SEC_CONTACT: 'ops@holon.example' } })).toBe(false);
    // The other shipped agents do not depend on it.
    const others = (await loadDevRegistry([AGENTS], { log, exclude: [], env: {} })).registry.list().map((a) => a.manifest.id);
    expect(others.sort()).toEqual(['holon-labs/csv-profile', 'holon-labs/summarize']);
  });

  /** The production problems about HOLON_SEC_CONTACT (others may be missing too: only this one is looked at). */
  const secProblems = (env: Record<string, string>) => {
    try {
      loadConfig({ NODE_ENV: 'production', ...env });
      return [];
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message.split('\n').filter((l) => l.includes('HOLON_SEC_CONTACT'));
    }
  };

  it('production: needed while listed, an email address; not while excluded', () => {
    const needed = [
      '- production needs HOLON_SEC_CONTACT (an email address the SEC can reach) while holon-labs/sec-company is listed: set it, or exclude the agent',
    ];
    expect(secProblems({ HOLON_EXCLUDE: 'holon-labs/summarize' })).toEqual(needed);
    expect(secProblems({ HOLON_EXCLUDE: '' })).toEqual(needed);
    for (const bad of ['ops', 'ops@localhost', 'Ops <ops@holon.example>', 'ops@holon.example\r\nX-Evil: 1', 'a b@holon.example']) {
      expect(secProblems({ HOLON_EXCLUDE: '', HOLON_SEC_CONTACT: bad }), bad).toEqual(needed);
    }
    expect(secProblems({ HOLON_EXCLUDE: '', HOLON_SEC_CONTACT: 'ops@holon.example' })).toEqual([]);
    expect(secProblems({ HOLON_EXCLUDE: '', HOLON_SEC_CONTACT: ' first.last+sec@mail.holon.example ' })).toEqual([]);
    expect(secProblems({})).toEqual([]); // the default HOLON_EXCLUDE pauses it
    expect(secProblems({ HOLON_EXCLUDE: 'holon-labs/sec-company' })).toEqual([]);
    // The value is never repeated.
    expect(secProblems({ HOLON_EXCLUDE: '', HOLON_SEC_CONTACT: 'not-an-address' }).join('')).not.toContain('not-an-address');
    // Dev mode never requires it.
    expect(() => loadConfig({ HOLON_EXCLUDE: '' })).not.toThrow();
  });
});
