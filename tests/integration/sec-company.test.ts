/**
 * holon-labs/sec-company through the reference MCP host (agents/host.mjs, the SDK client over Streamable HTTP) against
 * a fake EDGAR on loopback (tests/support/fake-edgar.ts): the answer and its document URLs, the User-Agent on every
 * request, at most 10 requests per second for the whole process, the day-long cache, requests shared by concurrent
 * calls and cancelled with the last of them, and the declared errors. Each test that counts requests has a fake of its
 * own: new URLs, so nothing is cached for them. End to end through a gateway: sec-company-gateway.test.ts.
 */
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startAgentHost, type AgentHost } from '../../agents/host.mjs';
import { parseManifest } from '../../shared/core/manifest/index.js';
import { createAjv } from '../../shared/core/schema/ajv.js';
import { startFakeEdgar, type FakeEdgar } from '../support/fake-edgar.js';
import { poll } from '../support/poll.js';

const parsed = parseManifest(readFileSync(new URL('../../agents/sec-company/holon.yaml', import.meta.url), 'utf8'), 'yaml');
if (!parsed.ok) throw new Error(`agents/sec-company/holon.yaml is invalid: ${JSON.stringify(parsed.problems)}`);
const SEC = parsed.manifest;
const validOutput = createAjv().compile(SEC.interface.output);
const CONTACT = 'filings-desk@holon.example';

interface Filing {
  form: string;
  date: string;
  accession_number: string;
  document_url: string;
}
interface Output {
  cik: string;
  name: string;
  tickers: string[];
  matched_by: string;
  filings: Filing[];
}

const hosts: AgentHost[] = [];
const clients: Client[] = [];
const fakes: FakeEdgar[] = [];
const logs: Array<{ level: string; message: string; fields?: unknown }> = [];

interface Setup {
  fake: FakeEdgar;
  host: AgentHost;
  client: Client;
}

/** A fake EDGAR of its own, a host whose sec-company uses it (with `env` over the fake's settings), a client. */
async function setup(env: Record<string, string | undefined> = {}): Promise<Setup> {
  const fake = await startFakeEdgar();
  fakes.push(fake);
  const host = await startAgentHost({
    port: 0,
    env: { ...fake.env(CONTACT), ...env },
    log: (level, message, fields) => void logs.push({ level, message, fields }),
  });
  hosts.push(host);
  return { fake, host, client: await connect(host) };
}

async function connect(host: AgentHost): Promise<Client> {
  const client = new Client({ name: 'sec-company-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(host.url)));
  clients.push(client);
  return client;
}

function lookup(client: Client, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
  return client.callTool({ name: 'sec_company', arguments: args }, undefined, signal ? { signal } : {}) as Promise<CallToolResult>;
}

async function output(client: Client, args: Record<string, unknown>): Promise<Output> {
  const r = await lookup(client, args);
  expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
  expect(validOutput(r.structuredContent), JSON.stringify(validOutput.errors)).toBe(true);
  return r.structuredContent as unknown as Output;
}

async function declared(client: Client, args: Record<string, unknown>): Promise<{ code: string; message: string }> {
  const r = await lookup(client, args);
  expect(r.isError).toBe(true);
  return (r.structuredContent as { error: { code: string; message: string } }).error;
}

const endpoints = (fake: FakeEdgar) => fake.requests.map((r) => r.endpoint);

afterEach(() => {
  // Nothing of an input, an output or the contact is ever logged.
  for (const line of logs) expect(JSON.stringify(line)).not.toMatch(/AAPL|Apple|hathaway|Testco|filings-desk|0000320193/i);
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await Promise.all(hosts.map((h) => h.close()));
  await Promise.all(fakes.map((f) => f.stop()));
});

describe('holon-labs/sec-company over MCP', () => {
  it('AAPL: the CIK, the name, the 10 newest filings with their archive URLs; every request names the contact', async () => {
    const { fake, client } = await setup();
    const out = await output(client, { company: 'AAPL' });
    expect(out).toMatchObject({ cik: '0000320193', name: 'Apple Inc.', tickers: ['AAPL'], matched_by: 'ticker' });
    expect(out.filings).toHaveLength(10);
    expect(out.filings.map((f) => f.date)).toEqual([...out.filings.map((f) => f.date)].sort().reverse());
    const archive = `${fake.filesUrl}/Archives/edgar/data/320193`;
    expect(out.filings[0]).toEqual({
      form: '10-K',
      date: '2024-11-01',
      accession_number: '0000320193-24-000123',
      document_url: `${archive}/000032019324000123/aapl-20240928.htm`,
    });
    expect(out.filings[2]!.document_url).toBe(`${archive}/000032019324000118/xslF345X05/wk-form4_1729204215.xml`);
    // EDGAR names no primary document: the filing's index page.
    expect(out.filings[3]).toMatchObject({ form: 'SC 13G/A', document_url: `${archive}/000032019324000117/0000320193-24-000117-index.htm` });
    expect(fake.requests.map((r) => [r.path, r.userAgent])).toEqual([
      ['/www/files/company_tickers.json', `Holon ${CONTACT}`],
      ['/data/submissions/CIK0000320193.json', `Holon ${CONTACT}`],
    ]);
  });

  it('forms in any letter case, the limit, newest first whatever EDGAR’s order, the current name', async () => {
    const { client } = await setup();
    const apple = await output(client, { company: 'aapl', forms: ['10-q', '8-K'], limit: 3 });
    expect(apple.filings.map((f) => [f.form, f.date])).toEqual([
      ['8-K', '2024-10-31'],
      ['10-Q', '2024-08-02'],
      ['8-K', '2024-08-01'],
    ]);
    expect((await output(client, { company: 'AAPL', forms: ['10-K/A'] })).filings).toEqual([]);
    // Renamed since: the map's title finds it, the submissions give its name; EDGAR listed it out of date order.
    const amazon = await output(client, { company: 'amazon com inc' });
    expect(amazon).toMatchObject({ cik: '0001018724', name: 'AMAZON.COM, INC.', matched_by: 'name' });
    expect(amazon.filings.map((f) => f.date)).toEqual(['2024-11-01', '2024-10-31', '2024-10-01']);
    expect(await output(client, { company: 'hathaway', limit: 1 })).toMatchObject({ cik: '0001067983', matched_by: 'contains', tickers: ['BRK-B', 'BRK-A'] });
  });

  it('answers a repeated lookup from its cache: no request; the ticker map is fetched once for every company', async () => {
    const { fake, client } = await setup();
    const first = await output(client, { company: 'AAPL' });
    expect(await output(client, { company: 'Apple Inc.', limit: 10 })).toEqual({ ...first, matched_by: 'name' });
    expect(endpoints(fake)).toEqual(['tickers', 'submissions']);
    await output(client, { company: 'MSFT' });
    await output(client, { company: 'microsoft' });
    expect(endpoints(fake)).toEqual(['tickers', 'submissions', 'submissions']);
  });

  it('30 lookups at once from three sessions: at most 10 requests in any second, one shared ticker map, all answered', async () => {
    const { fake, host, client } = await setup();
    const sessions = [client, await connect(host), await connect(host)];
    const started = performance.now();
    const outs = await Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        const n = String(i + 1).padStart(2, '0');
        return output(sessions[i % 3]!, { company: `TC${n}` }).then((o) => [n, o.cik, o.filings.length]);
      }),
    );
    expect(outs).toEqual(Array.from({ length: 30 }, (_, i) => [String(i + 1).padStart(2, '0'), String(9_000_001 + i).padStart(10, '0'), 2]));
    expect(endpoints(fake).filter((e) => e === 'tickers')).toHaveLength(1);
    expect(fake.requests).toHaveLength(31);
    const times = fake.requests.map((r) => r.at).sort((a, b) => a - b);
    // The limiter schedules at most 10 starts in any 1050 ms; the fake sees them a little later, each by its own delay
    // (the event loop, the network). Under load those delays differ by tens of milliseconds, so the window counted
    // here is 900 ms: at most 10 in it holds whenever the delays differ by less than 150 ms. Measured at the fake in
    // a 1000 ms window it was 11 once, on a loaded machine, though the limiter kept its schedule.
    const busiest = Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + 900).length));
    expect(busiest).toBeLessThanOrEqual(10);
    expect(busiest).toBeGreaterThanOrEqual(9);
    // 31 requests, 10 a second: the last could not start before 3 s.
    expect(times[30]! - started).toBeGreaterThanOrEqual(3000);
    for (const r of fake.requests) expect(r.userAgent).toBe(`Holon ${CONTACT}`);
  });

  it('one request for concurrent callers of one company; cancelled at EDGAR only when the last of them has gone', async () => {
    const { fake, client } = await setup();
    await output(client, { company: 'TSLA' }).catch(() => undefined); // the ticker map, cached (TSLA is unknown)
    fake.fail('submissions', 'hang');
    const a = new AbortController();
    const b = new AbortController();
    const first = lookup(client, { company: 'MSFT' }, a.signal).catch((e: unknown) => e);
    const second = lookup(client, { company: 'MSFT' }, b.signal).catch((e: unknown) => e);
    await poll(() => endpoints(fake).includes('submissions'), { what: 'the request to EDGAR' });
    a.abort();
    expect(await first).toBeInstanceOf(Error);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(fake.abandoned).toBe(0);
    b.abort();
    expect(await second).toBeInstanceOf(Error);
    await poll(() => fake.abandoned === 1, { what: 'EDGAR to see the request cancelled' });
    expect(endpoints(fake).filter((e) => e === 'submissions')).toHaveLength(1);
  });
});

describe('declared errors, never billed', () => {
  it('unknown_company (without asking for submissions), ambiguous_company, and a company EDGAR has no submissions for', async () => {
    const { fake, client } = await setup();
    expect(await declared(client, { company: 'Zzyzx Quantum Widgets' })).toEqual({
      code: 'unknown_company',
      message: 'EDGAR lists no company whose ticker or name is "Zzyzx Quantum Widgets"',
    });
    expect(endpoints(fake)).toEqual(['tickers']);
    expect(await declared(client, { company: 'Apple' })).toMatchObject({ code: 'ambiguous_company', message: expect.stringContaining('Apple Inc. (AAPL)') });
    expect(await declared(client, { company: 'GHST' })).toEqual({
      code: 'unknown_company',
      message: 'EDGAR has no filings for Ghost Holdings Corp (CIK 0000999999)',
    });
    for (const code of ['unknown_company', 'ambiguous_company']) expect(SEC.interface.errors[code]).toMatchObject({ billed: false });
  });

  it('EDGAR answering 500, or not JSON, or JSON of another shape: edgar_unavailable, and nothing cached', async () => {
    const { fake, client } = await setup();
    fake.fail('tickers', 500);
    expect(await declared(client, { company: 'AAPL' })).toEqual({ code: 'edgar_unavailable', message: 'EDGAR answered 500' });
    fake.fail('tickers', 'not_json');
    expect(await declared(client, { company: 'AAPL' })).toEqual({ code: 'edgar_unavailable', message: 'EDGAR answered with something that is not JSON' });
    fake.fail('tickers', 'wrong_shape');
    expect(await declared(client, { company: 'AAPL' })).toEqual({
      code: 'edgar_unavailable',
      message: 'EDGAR answered with JSON that is not the document expected',
    });
    fake.fail('tickers', 404);
    expect(await declared(client, { company: 'AAPL' })).toEqual({ code: 'edgar_unavailable', message: 'EDGAR answered 404 for its ticker map' });
    fake.fail('tickers', undefined);
    fake.fail('submissions', 'wrong_shape');
    expect((await declared(client, { company: 'AAPL' })).code).toBe('edgar_unavailable');
    fake.fail('submissions', 500);
    expect((await declared(client, { company: 'AAPL' })).code).toBe('edgar_unavailable');
    fake.fail('submissions', undefined);
    expect((await output(client, { company: 'AAPL' })).cik).toBe('0000320193');
    expect(endpoints(fake)).toEqual(['tickers', 'tickers', 'tickers', 'tickers', 'tickers', 'submissions', 'submissions', 'submissions']);
    expect(SEC.interface.errors.edgar_unavailable).toMatchObject({ billed: false });
  });

  it('EDGAR hanging past HOLON_SEC_TIMEOUT_MS: edgar_unavailable, in time', async () => {
    const { fake, client } = await setup({ HOLON_SEC_TIMEOUT_MS: '300' });
    fake.fail('tickers', 'hang');
    const started = Date.now();
    expect(await declared(client, { company: 'AAPL' })).toEqual({ code: 'edgar_unavailable', message: 'EDGAR did not answer within 300 ms' });
    expect(Date.now() - started).toBeLessThan(3000);
    await poll(() => fake.abandoned === 1, { what: 'the timed-out request to be closed' });
  });

  it('no contact, or one that is not an email address, or a bad setting: not_configured, and EDGAR is not asked', async () => {
    const settings: Array<[Record<string, string | undefined>, RegExp]> = [
      [{ HOLON_SEC_CONTACT: undefined }, /no SEC contact \(HOLON_SEC_CONTACT\)/],
      [{ HOLON_SEC_CONTACT: '   ' }, /no SEC contact/],
      [{ HOLON_SEC_CONTACT: 'filings desk' }, /HOLON_SEC_CONTACT is not an email address/],
      [{ HOLON_SEC_CONTACT: 'ops@holon.example\r\nX-Injected: 1' }, /HOLON_SEC_CONTACT is not an email address/],
      [{ HOLON_SEC_URL: 'ftp://data.sec.gov' }, /HOLON_SEC_URL must be an http\(s\) URL/],
      [{ HOLON_SEC_FILES_URL: 'https://user:pw@www.sec.gov' }, /HOLON_SEC_FILES_URL must be an http\(s\) URL/],
      [{ HOLON_SEC_TIMEOUT_MS: '5s' }, /HOLON_SEC_TIMEOUT_MS must be an integer from 100 to 60000/],
    ];
    for (const [env, message] of settings) {
      const { fake, client } = await setup(env);
      const error = await declared(client, { company: 'AAPL' });
      expect(error, JSON.stringify(env)).toMatchObject({ code: 'not_configured', message: expect.stringMatching(message) });
      expect(fake.requests).toEqual([]);
    }
    expect(SEC.interface.errors.not_configured).toMatchObject({ billed: false });
  });
});
