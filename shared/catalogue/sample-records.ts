/**
 * Sample Agent Records (HOLON_RECORDS; gateway.md §7: "off by default: sample records are not measurements").
 *
 * For a demo, or a fresh site with no traffic yet, the operator may name a JSON file of sample records, one per
 * agent id. The figures use the names of the measured record (agent-record.ts), so a sample reads like one:
 *
 *   { "examples/echo-upper": { "runs": 1200, "success_rate": "0.97", "latency_ms": { "p50": 180, "p95": 900 },
 *                              "cost_per_successful_run": "0.0104", "currency": "EUR" } }
 *
 *   runs                     required, a whole number ≥ 0;
 *   success_rate             0..1, a decimal string ("0.97") or a JSON number, at most 4 decimals; required
 *                            with runs, absent (or null) without;
 *   latency_ms               {p50, p95}, whole milliseconds, p50 ≤ p95; required with runs, absent without;
 *   cost_per_successful_run  optional, a decimal string (an amount: at most 6 decimals, never a JSON number);
 *                            only with a success rate above 0;
 *   currency                 optional, three capital letters; default EUR with runs, null without.
 * Anything else (another field, a key that is not an agent id, a wrong type) is a problem naming its JSON path,
 * and the gateway refuses to start (ConfigError, like every invalid setting). The file is read once, at start.
 *
 * Where a sample is shown: beside the measured record, never in it — `sample` on the catalogue entry
 * (catalog-page.ts) and on the one-agent view (describeAgent, catalogue.ts: also MCP get_agent), and only
 * while the agent has no measured run at all (every version, yanked ones included). Measured fields (`record`,
 * `measured`, `records`, `versions`) stay what Holon measured. Search, ranking and admission (searchCatalogue,
 * resolve.ts, checkCall's `require.*`, MCP search_agents) never read samples.
 */
import { readFileSync } from 'node:fs';
import { jsonPath, type Problem } from '../core/errors.js';
import { isAgentId } from '../core/identifiers.js';
import { formatAmount, isCurrency, ONE_RATE, tryParseAmount, tryParseRate } from '../core/money.js';
import { ConfigError } from '../platform/config.js';
import { isJsonObject } from '../core/json.js';

/** What labels every sample, wherever it is shown. */
const SAMPLE_SOURCE = 'sample' as const;
export const SAMPLE_NOTE = 'sample figures set by the operator (HOLON_RECORDS), not measured by Holon';
const SAMPLE_DEFAULT_CURRENCY = 'EUR';

/** A sample as shown: the measured record's names, plus its labels. JSON-ready, frozen. */
export interface SampleRecord {
  source: typeof SAMPLE_SOURCE;
  note: string;
  runs: number;
  success_rate: number | null;
  latency_ms: { p50: number | null; p95: number | null };
  currency: string | null;
  cost_per_successful_run: string | null;
}

/** Keyed by agent id. */
export type SampleRecords = ReadonlyMap<string, SampleRecord>;

const FIELDS = ['runs', 'success_rate', 'latency_ms', 'cost_per_successful_run', 'currency'] as const;
/** Names one might guess, and the field that says it. */
const HINTS: Record<string, string> = {
  successes: 'success_rate (0..1)',
  p50_ms: 'latency_ms: {p50, p95}',
  p95_ms: 'latency_ms: {p50, p95}',
  latency_p50_ms: 'latency_ms: {p50, p95}',
  p50: 'latency_ms: {p50, p95}',
  p95: 'latency_ms: {p50, p95}',
  cost_per_success: 'cost_per_successful_run',
  cost: 'cost_per_successful_run',
};
/** At most this many problems are listed; the rest are counted. */
const MAX_LISTED = 20;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return `the number ${String(value)}`;
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `a ${typeof value}`;
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** 0..1 with at most 4 decimals, as a number (the measured record's success_rate is a number); or a message. */
function successRate(v: unknown): { ok: true; value: number } | { ok: false; message: string } {
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v < 0 || v > 1) return { ok: false, message: `must be from 0 to 1, not ${String(v)}` };
    if (Number(v.toFixed(4)) !== v) return { ok: false, message: `${String(v)} has more than 4 decimals` };
    return { ok: true, value: v };
  }
  if (typeof v !== 'string') return { ok: false, message: `must be a number from 0 to 1 or a decimal string such as "0.97", not ${describe(v)}` };
  const r = tryParseRate(v, { maxDecimals: 4, atMost: ONE_RATE });
  return r.ok ? { ok: true, value: Number(r.value.num) / Number(r.value.den) } : { ok: false, message: r.message };
}

function parseOne(id: string, raw: unknown, problems: Problem[]): SampleRecord | undefined {
  const at = (...segments: string[]) => jsonPath(id, ...segments);
  const before = problems.length;
  const problem = (path: string, message: string) => void problems.push({ path, message });
  if (!isAgentId(id)) problem(at(), 'is not an agent id (<namespace>/<name>: lowercase letters, digits and inner "-")');
  if (!isJsonObject(raw)) {
    problem(at(), `must be an object {runs, success_rate, latency_ms, cost_per_successful_run?, currency?}, not ${describe(raw)}`);
    return undefined;
  }
  for (const key of Object.keys(raw)) {
    if (!(FIELDS as readonly string[]).includes(key)) problem(at(key), `unknown field${HINTS[key] ? ` (did you mean ${HINTS[key]}?)` : ''}`);
  }
  const given = (key: (typeof FIELDS)[number]) => raw[key] !== undefined && raw[key] !== null;

  const runs = raw.runs;
  if (runs === undefined) problem(at('runs'), 'is required (a whole number ≥ 0)');
  else if (!isCount(runs)) problem(at('runs'), `must be a whole number ≥ 0, not ${describe(runs)}`);
  const withRuns = isCount(runs) && runs > 0;
  const without = isCount(runs) && runs === 0;

  let rate: number | null = null;
  if (given('success_rate')) {
    const r = successRate(raw.success_rate);
    if (!r.ok) problem(at('success_rate'), r.message);
    else rate = r.value;
    if (without) problem(at('success_rate'), 'a sample of 0 runs has no success rate (leave it out)');
  } else if (withRuns) problem(at('success_rate'), 'is required when runs is above 0 (0..1, e.g. "0.97")');

  let latency: SampleRecord['latency_ms'] = { p50: null, p95: null };
  if (given('latency_ms')) {
    const l = raw.latency_ms;
    if (!isJsonObject(l)) problem(at('latency_ms'), `must be an object {p50, p95} of whole milliseconds, not ${describe(l)}`);
    else {
      for (const key of Object.keys(l)) if (key !== 'p50' && key !== 'p95') problem(at('latency_ms', key), 'unknown field (latency_ms has p50 and p95)');
      for (const key of ['p50', 'p95'] as const) {
        if (l[key] === undefined) problem(at('latency_ms', key), 'is required (whole milliseconds)');
        else if (!isCount(l[key])) problem(at('latency_ms', key), `must be a whole number of milliseconds ≥ 0, not ${describe(l[key])}`);
      }
      if (isCount(l.p50) && isCount(l.p95)) {
        if (l.p50 > l.p95) problem(at('latency_ms'), `p50 (${l.p50}) must not be above p95 (${l.p95})`);
        latency = { p50: l.p50, p95: l.p95 };
      }
    }
    if (without) problem(at('latency_ms'), 'a sample of 0 runs has no latency (leave it out)');
  } else if (withRuns) problem(at('latency_ms'), 'is required when runs is above 0 ({p50, p95} in whole milliseconds)');

  let cost: string | null = null;
  if (given('cost_per_successful_run')) {
    const c = tryParseAmount(raw.cost_per_successful_run);
    if (!c.ok) problem(at('cost_per_successful_run'), c.message);
    else cost = formatAmount(c.value);
    if (without) problem(at('cost_per_successful_run'), 'a sample of 0 runs has no cost per successful run (leave it out)');
    else if (rate === 0) problem(at('cost_per_successful_run'), 'a sample without successes (success_rate 0) has no cost per successful run');
  }

  let currency: string | null = withRuns ? SAMPLE_DEFAULT_CURRENCY : null;
  if (given('currency')) {
    if (!isCurrency(raw.currency)) problem(at('currency'), `must be three capital letters such as "EUR", not ${describe(raw.currency)}`);
    else currency = raw.currency;
    if (without) problem(at('currency'), 'a sample of 0 runs has no currency (leave it out)');
  }

  if (problems.length > before || !isCount(runs)) return undefined;
  return Object.freeze({
    source: SAMPLE_SOURCE,
    note: SAMPLE_NOTE,
    runs,
    success_rate: rate,
    latency_ms: Object.freeze(latency),
    currency,
    cost_per_successful_run: cost,
  });
}

/** Parse the file's text: every problem with its JSON path, or the samples by agent id. Pure. */
export function parseSampleRecords(text: string): { ok: true; records: SampleRecords } | { ok: false; problems: Problem[] } {
  let doc: unknown;
  try {
    doc = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    return { ok: false, problems: [{ path: '$', message: `is not JSON: ${(e as Error).message}` }] };
  }
  if (!isJsonObject(doc)) {
    return { ok: false, problems: [{ path: '$', message: `must be an object keyed by agent id ({"<namespace>/<name>": {runs, …}}), not ${describe(doc)}` }] };
  }
  const problems: Problem[] = [];
  const records = new Map<string, SampleRecord>();
  for (const [id, raw] of Object.entries(doc)) {
    const r = parseOne(id, raw, problems);
    if (r) records.set(id, r);
  }
  return problems.length ? { ok: false, problems } : { ok: true, records };
}

/**
 * Read and check the HOLON_RECORDS file at start-up (services/compose.ts). Throws a ConfigError naming the file
 * and each problem's JSON path, so the gateway refuses to start, as for any invalid setting.
 */
export function readSampleRecords(file: string): SampleRecords {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new ConfigError(`configuration problems:\n- HOLON_RECORDS ${file}: cannot read the file (${code === 'ENOENT' ? 'it does not exist' : code})`);
  }
  const parsed = parseSampleRecords(text);
  if (parsed.ok) return parsed.records;
  const listed = parsed.problems.slice(0, MAX_LISTED).map((p) => `HOLON_RECORDS ${file}: ${p.path} ${p.message}`);
  const more = parsed.problems.length - listed.length;
  if (more > 0) listed.push(`HOLON_RECORDS ${file}: and ${more} more problem(s)`);
  throw new ConfigError(`configuration problems:\n- ${listed.join('\n- ')}`);
}

/** The sample to show beside an agent's measured record: only with samples on, and while it has no measured run. */
export function sampleFor(samples: SampleRecords | undefined, agentId: string, measuredRuns: number): SampleRecord | undefined {
  return samples !== undefined && measuredRuns === 0 ? samples.get(agentId) : undefined;
}
