/**
 * HOLON_RECORDS (shared/catalogue/sample-records.ts): the file of sample Agent Records, checked at start-up.
 * Every problem names the file and its JSON path; the gateway refuses to start with an invalid file.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../services/compose.js';
import { parseSampleRecords, readSampleRecords, SAMPLE_NOTE, sampleFor } from '../../shared/catalogue/sample-records.js';
import { ConfigError, loadConfig } from '../../shared/platform/config.js';

const ROOT = path.resolve(__dirname, '../..');

const GOOD = {
  'examples/echo-upper': { runs: 1200, success_rate: '0.97', latency_ms: { p50: 180, p95: 900 }, cost_per_successful_run: '0.0100', currency: 'EUR' },
  'examples/word-count': { runs: 40, success_rate: 0.5, latency_ms: { p50: 12, p95: 12 } },
  'acme/new': { runs: 0 },
};

/** The problems of a document, as `path message` lines. */
function problemsOf(doc: unknown): string[] {
  const r = parseSampleRecords(typeof doc === 'string' ? doc : JSON.stringify(doc));
  if (r.ok) return [];
  return r.problems.map((p) => `${p.path} ${p.message}`);
}

const one = (fields: Record<string, unknown>) => ({ 'acme/agent': fields });
const OK_FIELDS = { runs: 10, success_rate: '0.9', latency_ms: { p50: 10, p95: 20 } };

describe('parsing the HOLON_RECORDS file', () => {
  it('reads samples in the measured record’s names, labelled as samples', () => {
    const r = parseSampleRecords(JSON.stringify(GOOD));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect([...r.records.keys()]).toEqual(['examples/echo-upper', 'examples/word-count', 'acme/new']);
    expect(r.records.get('examples/echo-upper')).toEqual({
      source: 'sample',
      note: SAMPLE_NOTE,
      runs: 1200,
      success_rate: 0.97,
      latency_ms: { p50: 180, p95: 900 },
      currency: 'EUR',
      // formatted as measured amounts are (formatAmount)
      cost_per_successful_run: '0.01',
    });
    // a number works as a success rate; without a currency, EUR; without a cost, null
    expect(r.records.get('examples/word-count')).toMatchObject({ success_rate: 0.5, currency: 'EUR', cost_per_successful_run: null });
    // 0 runs: nothing else, like an empty measured record
    expect(r.records.get('acme/new')).toMatchObject({
      runs: 0,
      success_rate: null,
      latency_ms: { p50: null, p95: null },
      currency: null,
      cost_per_successful_run: null,
    });
    expect(Object.isFrozen(r.records.get('acme/new'))).toBe(true);
  });

  it('accepts an empty file object and a byte-order mark', () => {
    expect(parseSampleRecords('{}')).toMatchObject({ ok: true });
    expect(parseSampleRecords(`\uFEFF${JSON.stringify(GOOD)}`)).toMatchObject({ ok: true });
  });

  it('refuses what is not an object of agent ids', () => {
    expect(problemsOf('{"examples/echo-upper": ')[0]).toMatch(/^\$ is not JSON/);
    expect(problemsOf([GOOD])).toEqual([expect.stringMatching(/^\$ must be an object keyed by agent id/)]);
    expect(problemsOf('null')).toEqual([expect.stringMatching(/^\$ must be an object/)]);
    expect(problemsOf({ 'Not An Id': OK_FIELDS })).toEqual([expect.stringMatching(/^\$\["Not An Id"\] is not an agent id/)]);
    expect(problemsOf('{"__proto__": {"runs": 0}}')).toEqual([expect.stringMatching(/^\$\.__proto__ is not an agent id/)]);
    expect(problemsOf({ 'acme/agent': 12 })).toEqual([expect.stringMatching(/^\$\["acme\/agent"\] must be an object .* not the number 12/)]);
    expect(problemsOf({ 'acme/agent': [] })[0]).toMatch(/not an array/);
  });

  it('refuses an unknown field, with a hint for the names one might guess', () => {
    expect(problemsOf(one({ ...OK_FIELDS, p50_ms: 10 }))).toEqual(['$["acme/agent"].p50_ms unknown field (did you mean latency_ms: {p50, p95}?)']);
    expect(problemsOf(one({ ...OK_FIELDS, cost_per_success: '0.01' }))).toEqual([
      '$["acme/agent"].cost_per_success unknown field (did you mean cost_per_successful_run?)',
    ]);
    expect(problemsOf(one({ ...OK_FIELDS, colour: 'red' }))).toEqual(['$["acme/agent"].colour unknown field']);
    expect(problemsOf(one({ ...OK_FIELDS, latency_ms: { p50: 1, p95: 2, p99: 3 } }))).toEqual([
      '$["acme/agent"].latency_ms.p99 unknown field (latency_ms has p50 and p95)',
    ]);
  });

  it('checks runs', () => {
    expect(problemsOf(one({ success_rate: '0.9', latency_ms: { p50: 1, p95: 2 } }))).toEqual(['$["acme/agent"].runs is required (a whole number ≥ 0)']);
    for (const bad of [-1, 1.5, '10', null, true])
      expect(problemsOf(one({ ...OK_FIELDS, runs: bad })), String(bad)).toEqual([
        expect.stringMatching(/^\$\["acme\/agent"\]\.runs must be a whole number ≥ 0/),
      ]);
  });

  it('checks the success rate: 0..1, a decimal string or a number, at most 4 decimals, required with runs', () => {
    const at = (v: unknown) => problemsOf(one({ ...OK_FIELDS, success_rate: v }));
    for (const good of ['0', '1', '0.9731', 0, 1, 0.9731, '1.0']) expect(at(good), String(good)).toEqual([]);
    expect(at('1.5')).toEqual(['$["acme/agent"].success_rate "1.5" must be at most 1']);
    expect(at(1.5)).toEqual(['$["acme/agent"].success_rate must be from 0 to 1, not 1.5']);
    expect(at(-0.1)[0]).toMatch(/must be from 0 to 1/);
    expect(at('0.97315')[0]).toMatch(/at most 4 are allowed/);
    expect(at(0.97315)[0]).toMatch(/more than 4 decimals/);
    expect(at('97%')[0]).toMatch(/not a plain non-negative decimal/);
    expect(at(true)[0]).toMatch(/must be a number from 0 to 1 or a decimal string .* not a boolean/);
    const { success_rate: _, ...noRate } = OK_FIELDS;
    expect(problemsOf(one(noRate))).toEqual(['$["acme/agent"].success_rate is required when runs is above 0 (0..1, e.g. "0.97")']);
    expect(problemsOf(one({ ...noRate, success_rate: null }))).toEqual(['$["acme/agent"].success_rate is required when runs is above 0 (0..1, e.g. "0.97")']);
  });

  it('checks latency_ms: {p50, p95} in whole ms, p50 ≤ p95, required with runs', () => {
    const at = (v: unknown) => problemsOf(one({ ...OK_FIELDS, latency_ms: v }));
    expect(at({ p50: 30, p95: 20 })).toEqual(['$["acme/agent"].latency_ms p50 (30) must not be above p95 (20)']);
    expect(at({ p50: 1.5, p95: 20 })).toEqual(['$["acme/agent"].latency_ms.p50 must be a whole number of milliseconds ≥ 0, not the number 1.5']);
    expect(at({ p50: 10 })).toEqual(['$["acme/agent"].latency_ms.p95 is required (whole milliseconds)']);
    expect(at(120)).toEqual(['$["acme/agent"].latency_ms must be an object {p50, p95} of whole milliseconds, not the number 120']);
    expect(problemsOf(one({ runs: 3, success_rate: '1' }))).toEqual([
      '$["acme/agent"].latency_ms is required when runs is above 0 ({p50, p95} in whole milliseconds)',
    ]);
  });

  it('checks the cost per successful run and the currency', () => {
    const at = (extra: Record<string, unknown>) => problemsOf(one({ ...OK_FIELDS, ...extra }));
    expect(at({ cost_per_successful_run: '0.000001', currency: 'USD' })).toEqual([]);
    expect(at({ cost_per_successful_run: 0.01 })).toEqual([
      '$["acme/agent"].cost_per_successful_run must be a decimal string such as "0.05", not the JSON number 0.01',
    ]);
    expect(at({ cost_per_successful_run: '-0.01' })[0]).toMatch(/must not be negative/);
    expect(at({ cost_per_successful_run: '0.0000001' })[0]).toMatch(/at most 6 are allowed/);
    expect(at({ success_rate: '0', cost_per_successful_run: '0.01' })).toEqual([
      '$["acme/agent"].cost_per_successful_run a sample without successes (success_rate 0) has no cost per successful run',
    ]);
    expect(at({ currency: 'eur' })).toEqual(['$["acme/agent"].currency must be three capital letters such as "EUR", not the string "eur"']);
  });

  it('a sample of 0 runs has no other figures', () => {
    expect(problemsOf(one({ runs: 0, success_rate: '0.9', latency_ms: { p50: 1, p95: 2 }, cost_per_successful_run: '0.01', currency: 'EUR' }))).toEqual([
      '$["acme/agent"].success_rate a sample of 0 runs has no success rate (leave it out)',
      '$["acme/agent"].latency_ms a sample of 0 runs has no latency (leave it out)',
      '$["acme/agent"].cost_per_successful_run a sample of 0 runs has no cost per successful run (leave it out)',
      '$["acme/agent"].currency a sample of 0 runs has no currency (leave it out)',
    ]);
    expect(problemsOf(one({ runs: 0, success_rate: null, latency_ms: null }))).toEqual([]);
  });

  it('lists every problem of every agent', () => {
    const problems = problemsOf({ 'acme/one': { runs: -1 }, 'acme/two': { ...OK_FIELDS, currency: 'x' }, 'acme/three': OK_FIELDS });
    expect(problems).toEqual([
      '$["acme/one"].runs must be a whole number ≥ 0, not the number -1',
      '$["acme/two"].currency must be three capital letters such as "EUR", not the string "x"',
    ]);
  });
});

describe('a sample is shown only beside an agent without measured runs', () => {
  it('sampleFor', () => {
    const r = parseSampleRecords(JSON.stringify(GOOD));
    if (!r.ok) throw new Error('GOOD is valid');
    expect(sampleFor(r.records, 'examples/echo-upper', 0)).toBe(r.records.get('examples/echo-upper'));
    expect(sampleFor(r.records, 'examples/echo-upper', 1)).toBeUndefined();
    expect(sampleFor(r.records, 'examples/flaky', 0)).toBeUndefined();
    expect(sampleFor(undefined, 'examples/echo-upper', 0)).toBeUndefined();
  });
});

describe('HOLON_RECORDS at start-up', () => {
  let dir: string;
  let good: string;
  let bad: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'holon-records-'));
    good = path.join(dir, 'good.json');
    bad = path.join(dir, 'bad.json');
    await writeFile(good, JSON.stringify(GOOD));
    await writeFile(bad, JSON.stringify({ 'examples/echo-upper': { runs: 'many', success_rate: '0.97', latency_ms: { p50: 1, p95: 2 }, p95_ms: 3 } }));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the setting: off unless set, a path resolved from the working directory', () => {
    expect(loadConfig({}).recordsFile).toBeUndefined();
    expect('recordsFile' in loadConfig({})).toBe(false);
    expect(loadConfig({ HOLON_RECORDS: '  ' }).recordsFile).toBeUndefined();
    expect(loadConfig({ HOLON_RECORDS: 'samples/records.json' }).recordsFile).toBe(path.resolve('samples/records.json'));
    expect(loadConfig({ HOLON_RECORDS: good }).recordsFile).toBe(good);
  });

  it('readSampleRecords: the samples, or a ConfigError naming the file and each JSON path', () => {
    expect(readSampleRecords(good).size).toBe(3);
    const missing = path.join(dir, 'missing.json');
    expect(() => readSampleRecords(missing)).toThrow(ConfigError);
    expect(() => readSampleRecords(missing)).toThrow(`HOLON_RECORDS ${missing}: cannot read the file (it does not exist)`);
    let message = '';
    try {
      readSampleRecords(bad);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      message = (e as Error).message;
    }
    expect(message.split('\n')).toEqual([
      'configuration problems:',
      `- HOLON_RECORDS ${bad}: $["examples/echo-upper"].p95_ms unknown field (did you mean latency_ms: {p50, p95}?)`,
      `- HOLON_RECORDS ${bad}: $["examples/echo-upper"].runs must be a whole number ≥ 0, not the string "many"`,
    ]);
  });

  it('lists at most 20 problems and counts the rest', async () => {
    const many = path.join(dir, 'many.json');
    await writeFile(many, JSON.stringify(Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`acme/a${i}`, { runs: -1 }]))));
    const message = (() => {
      try {
        readSampleRecords(many);
        return '';
      } catch (e) {
        return (e as Error).message;
      }
    })();
    const lines = message.split('\n').filter((l) => l.startsWith('- '));
    expect(lines).toHaveLength(21);
    expect(lines[20]).toBe(`- HOLON_RECORDS ${many}: and 5 more problem(s)`);
  });

  it('the gateway refuses to start with an invalid file, before it opens anything', async () => {
    await expect(startGateway(['api'], { recordsFile: bad, port: 0, logLevel: 'silent' })).rejects.toThrow(ConfigError);
    await expect(startGateway(['api'], { recordsFile: path.join(dir, 'nope.json'), port: 0, logLevel: 'silent' })).rejects.toThrow(
      /HOLON_RECORDS .*nope\.json/,
    );
  });

  it('holon serve exits 1 with the problems and no stack trace', async () => {
    const run = promisify(execFile);
    const result = await run(process.execPath, [path.join(ROOT, 'bin/holon.mjs'), 'serve'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOLON_RECORDS: bad, HOLON_DB: path.join(dir, 'db') },
      timeout: 30_000,
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`HOLON_RECORDS ${bad}: $["examples/echo-upper"].runs must be a whole number ≥ 0`);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
