/**
 * The requests the HTTP fuzz test (tests/integration/fuzz.test.ts) sends, and what it expects of the answers:
 * - a request (`Req`, printed as a curl line when fast-check reports it), sent raw (`sendTo`), and `expectRest`, what a
 *   REST answer must be beyond `checkRest` (fuzz-http.ts): 400/413/415 for NUL, lone surrogates, deep nesting,
 *   malformed JSON, oversized bodies and wrong content types;
 * - `property`: a fast-check property with the run's seed (FUZZ_SEED), scale (FUZZ_RUNS) and catalogue (FUZZ_CATALOGUE);
 * - the generators of each route: valid bodies (VALID_CALLS, VALID_MANDATES, TOOL_ARGS and MESSAGES for /mcp) mutated
 *   field by field from pools of odd values (CALL_POOLS, MANDATE_POOLS, MCP_POOLS), poisoned with NUL, lone
 *   surrogates or nesting (`poisoned`, `poisonedToolCalls`), and the headers, sessions and approval ids around them;
 * - `auditedGateway`: one gateway for the tests of a describe, audited and drained after them.
 * Generic JSON and header arbitraries are fuzz-arbitraries.ts'; the raw HTTP client is fuzz-http.ts'.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect } from 'vitest';
import { useAudited, type TestGateway } from './gateway.js';
import {
  bodyOf,
  deepValue,
  headerValue,
  idSegment,
  isJsonType,
  jsonValue,
  LONE_SURROGATES,
  malformedBody,
  mutated,
  NULS,
  oddString,
  pathsOf,
  Raw,
  traitsOf,
  type Body,
  type Path,
} from './fuzz-arbitraries.js';
import { checkRest, drainedWithoutLiveHolds, excerpt, problemPaths, rawRequest, type RawReply } from './fuzz-http.js';
import { SETTINGS } from '../../shared/platform/settings/index.js';

export const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 20_250_611;
export const SCALE = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 1;
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
/** The gateway's default HOLON_BODY_LIMIT. */
export const LIMIT = SETTINGS.bodyLimitBytes.default;
/** Nesting this deep (or deeper) must be refused. */
export const TOO_DEEP = 1000;

// ---- requests ------------------------------------------------------------------------------------------------

export type Route = 'calls' | 'mandates' | 'approval' | 'approval-get' | 'mcp';

/** One request, printed as a curl line when fast-check reports it. */
export class Req {
  constructor(
    readonly route: Route,
    readonly method: 'GET' | 'POST',
    readonly path: string,
    readonly ct: string | undefined,
    readonly body: Body | undefined,
    readonly headers: Record<string, string> = {},
    /** approval routes: the id names an approval that exists. */
    readonly known = false,
  ) {}

  [fc.toStringMethod](): string {
    const h = Object.entries({ ...(this.ct ? { 'content-type': this.ct } : {}), ...this.headers })
      .map(([k, v]) => ` -H ${JSON.stringify(`${k}: ${short(v, 60)}`)}`)
      .join('');
    const b = this.body ? ` --data-binary ${JSON.stringify(short(this.body.text, 300))} (${Buffer.byteLength(this.body.text)} bytes)` : '';
    return `curl -X ${this.method} $GW${short(this.path, 120)}${h}${b}`;
  }
}

/** Long texts shortened for reports: runs of a repeated piece become ⟨piece×n⟩. */
function short(text: string, max: number): string {
  const squeezed = text.replace(/([\s\S]{1,8}?)\1{15,}/g, (run, piece: string) => `⟨${piece}×${run.length / piece.length}⟩`);
  return squeezed.length > max ? `${squeezed.slice(0, max)}…` : squeezed;
}

/** Every request is answered within 12 s (a synchronous call waits at most HOLON_SYNC_WAIT_S = 8 s). */
export async function sendTo(to: TestGateway, r: Req): Promise<RawReply> {
  try {
    return await rawRequest(
      to.url,
      { method: r.method, path: r.path, headers: { ...(r.ct ? { 'content-type': r.ct } : {}), ...r.headers }, ...(r.body ? { body: r.body.text } : {}) },
      12_000,
    );
  } catch (e) {
    throw new Error(`no answer: ${String(r[fc.toStringMethod]())} → 000 ${(e as Error).message}`);
  }
}

/** The answer a REST request must get, beyond `checkRest`. */
export function expectRest(r: Req, reply: RawReply): void {
  const where = `${String(r[fc.toStringMethod]())} → ${excerpt(reply)}`;
  checkRest(reply, String(r[fc.toStringMethod]()));
  if (/%00/i.test(r.path)) {
    expect(reply.status, `NUL in the URL: ${where}`).toBe(400);
    return;
  }
  const body = r.body;
  if (!body || body.text === '') return;
  const bytes = Buffer.byteLength(body.text);
  if (!isJsonType(r.ct)) {
    expect([415, ...(bytes > LIMIT ? [413] : [])], `a ${r.ct ?? 'missing'} Content-Type: ${where}`).toContain(reply.status);
    return;
  }
  if (bytes > LIMIT) {
    expect(reply.status, `over the body limit: ${where}`).toBe(413);
    return;
  }
  if (body.malformed) {
    expect(reply.status, `malformed JSON: ${where}`).toBe(400);
    return;
  }
  if (r.route === 'approval' && !r.known) {
    // 400 for an id that is not even a URL segment (broken percent-encoding) or a body that is no object.
    expect([400, 404], `no such approval: ${where}`).toContain(reply.status);
    return;
  }
  const t = body.traits;
  if (t.nul || t.surrogate || t.depth >= TOO_DEEP) {
    const why = [t.nul && 'a NUL', t.surrogate && 'a lone surrogate', t.depth >= TOO_DEEP && `${t.depth} levels of nesting`].filter(Boolean).join(', ');
    expect(reply.status, `${why}: ${where}`).toBe(400);
    if (body.object) expect(problemPaths(reply.json).length, `${why}, refused without a path: ${where}`).toBeGreaterThan(0);
  }
}

// ---- the gateways and their fixtures -------------------------------------------------------------------------

export const OPEN = {
  id: 'fz/open',
  issuer: 'fz',
  grantee: 'fz/assistant',
  allow: { agents: ['examples/*', 'fixtures/*'], capabilities: ['text.*', 'test.*'] },
  budget: { total: '500.00', currency: 'EUR', fx: { USD: '0.92' } },
};
/** Every call asks a human first: its input is kept (jsonb) until decided. */
export const ASK = { ...OPEN, id: 'fz/ask', approval: { above: '0.00' } };

/**
 * A gateway for the tests of the enclosing describe: started before them, handed to `useAudited` (ledger audit
 * after), stopped after them once every call has finished and no hold is live.
 */
export function auditedGateway(start: () => Promise<TestGateway>): () => TestGateway {
  let gw: TestGateway | undefined;
  let release: () => void = () => undefined;
  let finished: Promise<void> = Promise.resolve();
  beforeAll(async () => {
    const started = await start();
    await new Promise<void>((ready) => {
      finished = useAudited(started, async (x) => {
        gw = x;
        ready();
        await new Promise<void>((r) => {
          release = r;
        });
        await drainedWithoutLiveHolds(x);
      });
    });
  });
  afterAll(async () => {
    release();
    await finished;
  });
  return () => gw!;
}

/** Approvals made before the fuzzing (decided or not by it), by the test file's fixtures: the pools pick from them. */
export const approvals: string[] = [];
/** MCP sessions opened before the fuzzing, by the test file's fixtures: under fz/open and under fz/ask. */
export const sessions: string[] = [];

export const MCP_ACCEPT = 'application/json, text/event-stream';
export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1.0.0' } },
};

// ---- properties ----------------------------------------------------------------------------------------------

/**
 * FUZZ_CATALOGUE=1: instead of stopping at the first failure (and shrinking it), run every case and print one
 * example of each distinct failure (what was expected, the status, the error code) after the file (printCatalogue).
 */
const CATALOGUE = process.env.FUZZ_CATALOGUE === '1';
const catalogue = new Map<string, { count: number; examples: string[] }>();

function signature(message: string): string {
  const label = message.split(/: curl /)[0]!;
  const reply = message.split(' → ').pop()!;
  const status = /^(\d{3}) /.exec(reply)?.[1] ?? '-';
  const code = /\\"code\\":\\?"?(-?[\w.]+)/.exec(reply)?.[1] ?? '-';
  return `${label} | ${status} | ${code}`;
}

/** A fast-check property over `arb` with the run's seed and scale, stopped after 40 s of generating. */
export const property = <T>(arb: fc.Arbitrary<T>, numRuns: number, check: (v: T) => Promise<void>) =>
  fc.assert(
    fc.asyncProperty(arb, async (v) => {
      if (!CATALOGUE) return check(v);
      try {
        await check(v);
      } catch (e) {
        const message = (e as Error).message;
        const key = `${expect.getState().currentTestName} | ${signature(message)}`;
        const seen = catalogue.get(key);
        const example = message.slice(0, 1500);
        if (!seen) catalogue.set(key, { count: 1, examples: [example] });
        else if (++seen.count <= 3) seen.examples.push(example);
      }
    }),
    { seed: SEED, numRuns: runs(numRuns), interruptAfterTimeLimit: 40_000 },
  );

/** Under FUZZ_CATALOGUE=1, the distinct failures seen (for an `afterAll` of the file). */
export function printCatalogue(): void {
  if (CATALOGUE) {
    console.log(`fuzz: ${catalogue.size} distinct failures`);
    for (const [key, { count, examples }] of catalogue) console.log(`\n## ${key} (×${count})\n${examples.join('\n')}`);
  }
}

// ---- POST /v0/calls ------------------------------------------------------------------------------------------

export const VALID_CALLS: Record<string, unknown>[] = [
  { mandate: 'fz/open', agent: 'examples/echo-upper', input: { text: 'hi' } },
  { mandate: 'fz/open', capability: 'text.transform', input: { text: 'hi' } },
  { mandate: 'fz/open', agent: 'fixtures/usd', input: { any: ['thing', 1] } },
  { mandate: 'fz/ask', agent: 'fixtures/usd', input: { kept: { until: 'decided' } } },
  { mandate: 'fz/open', agent: 'fixtures/units', input: { units: 2, mode: 'ok' }, max_cost: '0.10' },
  { mandate: 'fz/open', agent: 'examples/flaky', input: { mode: 'crash' } },
  { mandate: 'fz/open', agent: 'examples/echo-upper@^1.0.0', input: { text: 'x' }, callback_url: 'http://127.0.0.1:9/cb' },
];

export const CALL_POOLS: Record<string, fc.Arbitrary<unknown>> = {
  mandate: fc.constantFrom('fz/open', 'fz/ask', 'fz/none', 'fz', 'fz/open.r_x', 'FZ/OPEN', ' fz/open', 'fz/open/'),
  agent: fc.constantFrom(
    'examples/echo-upper',
    'examples/echo-upper@1.0.0',
    'examples/echo-upper@>=9',
    'examples/echo-upper@',
    'examples/echo-upper@1.0.0@1',
    'examples/nope',
    'fixtures/usd',
    'fixtures/fork',
    'examples/*',
    'examples',
    'examples/echo-upper@~~1',
  ),
  capability: fc.constantFrom('text.transform', 'text.*', 'test.usd', 'nope.x', '*', 'text..x', '.'),
  input: fc.oneof(jsonValue, fc.constant({})),
  text: fc.oneof(oddString, fc.constant('x'.repeat(10_001))),
  units: fc.oneof(fc.integer(), fc.constant(1e21), fc.constant(-1), fc.constant(new Raw('1e400'))),
  mode: fc.constantFrom('ok', 'declared_billed', 'declared_unbilled', 'undeclared', 'over_budget_check', 'crash', 'invalid_output'),
  max_cost: fc.constantFrom('0.01', '0.5', '0', '-1', '1e3', '0.0000001', '99999999999999999999999', 0.1, 1, '', ' 0.1', '0.10 EUR', '1,00', 'NaN'),
  callback_url: fc.constantFrom('http://127.0.0.1:9/cb', 'ftp://x', 'http://u:p@h/', 'not a url', 'http://[::1]:9/', 'javascript:alert(1)', 'http://%00/'),
  approval: fc.oneof(
    fc.constantFrom('ap_x', '', 'x'.repeat(101)),
    fc.nat().map((n) => approvals[n % approvals.length]!),
  ),
};

export const callBodies = mutated(VALID_CALLS, CALL_POOLS);
export const callReq = (ct: fc.Arbitrary<string | undefined>, body: fc.Arbitrary<Body>, headers: fc.Arbitrary<Record<string, string>> = fc.constant({})) =>
  fc.tuple(ct, body, headers).map(([c, b, h]) => new Req('calls', 'POST', '/v0/calls', c, b, h));

/** Only values without NUL, lone surrogates or deep nesting: for the properties that look for other defects. */
export const clean = (b: Body) => !b.traits.nul && !b.traits.surrogate && b.traits.depth < TOO_DEEP;
export const JSON_CT = fc.constantFrom('application/json', 'application/json; charset=utf-8');

/** Values with a NUL, a lone surrogate, or nesting: at the top, in keys, in each field, deep inside `input`. */
export function poisoned(templates: Record<string, unknown>[], fields: Path[]): fc.Arbitrary<Body> {
  const poison = fc.oneof(
    fc.constantFrom(...LONE_SURROGATES, ...NULS),
    fc.constantFrom(...LONE_SURROGATES, ...NULS).map((s) => ({ [s]: 'v' })),
    fc.constantFrom(...LONE_SURROGATES, ...NULS).map((s) => [`x${s}`]),
    deepValue,
  );
  return fc
    .tuple(fc.constantFrom(...templates), fc.constantFrom(...fields), poison, fc.boolean())
    .map(([t, at, p, asKey]) => bodyOf(asKey && typeof p === 'string' ? { ...t, [p]: 1 } : setAt(t, at, p)))
    .filter((b) => b.traits.nul || b.traits.surrogate || b.traits.depth >= 150);
}

function setAt(doc: Record<string, unknown>, at: Path, value: unknown): Record<string, unknown> {
  let out: any = value;
  for (let i = at.length - 1; i >= 0; i--) {
    let parent: any = doc;
    for (const p of at.slice(0, i)) parent = parent?.[p] ?? {};
    out = Array.isArray(parent) ? Object.assign([...parent], { [at[i] as number]: out }) : { ...parent, [at[i] as string]: out };
  }
  return out;
}

// ---- POST /v0/mandates ---------------------------------------------------------------------------------------

export const VALID_MANDATES: Record<string, unknown>[] = [
  OPEN,
  { ...OPEN, id: 'fz/second' },
  {
    id: 'fz/full',
    issuer: 'fz',
    grantee: 'fz/assistant',
    allow: { agents: ['examples/*'], capabilities: ['text.*'], published: true },
    deny: { agents: ['examples/slow'], capabilities: ['test.*'] },
    require: { license: ['MIT'], data: { retention: '30d', region: ['eu'], training: false }, evaluated: true, min_success_rate: '0.5' },
    approval: { above: '0.50', agents: ['examples/flaky'], first_use: true },
    budget: { total: '10.00', currency: 'EUR', per_call: '1.00', fx: { USD: '0.92' } },
    delegation: { max_depth: 2 },
    expires_at: '2099-01-01T00:00:00Z',
  },
];

export const MANDATE_POOLS: Record<string, fc.Arbitrary<unknown>> = {
  id: fc.constantFrom('fz/a', 'fz/open', 'fz', 'fz/a.b', 'FZ/A', 'fz/a/b', 'other/a', 'fz/' + 'a'.repeat(300)),
  issuer: fc.constantFrom('fz', 'other', 'FZ', '', 'fz/x'),
  grantee: fc.constantFrom('fz/assistant', 'fz', 'other/x', 'fz/x@1'),
  total: fc.constantFrom('1.00', '0', '-1', '1e3', '0.0000001', '9'.repeat(30), 5, '', '1.000000001'),
  per_call: fc.constantFrom('1.00', '0', '20.00', 'x'),
  above: fc.constantFrom('0.00', '0.5', '-0', 'x'),
  currency: fc.constantFrom('EUR', 'USD', 'eur', 'XXX', '', 'EURO'),
  fx: fc.oneof(fc.constant({ USD: '0' }), fc.constant({ EUR: '1' }), fc.constant({ USD: '1e9' }), jsonValue),
  USD: fc.constantFrom('0.92', '0', '-1', '1/3', '0.00000000000000000001', 1),
  agents: fc.constantFrom(
    ['**'],
    ['*/*'],
    [''],
    ['examples/*@1'],
    Array.from({ length: 101 }, (_, i) => `a/b${i}`),
  ),
  capabilities: fc.constantFrom(['*'], ['text.**'], [''], ['.']),
  retention: fc.constantFrom('none', '0d', '99999d', '100000d', '1w'),
  region: fc.constantFrom(['eu'], ['x'], ['e'.repeat(17)], []),
  max_depth: fc.constantFrom(0, 8, 9, -1, 1.5, '2', 1e300),
  expires_at: fc.constantFrom('2099-02-30T00:00:00Z', '2000-01-01T00:00:00Z', '2099-01-01T24:00:00Z', '2099-01-01', '2099-01-01T00:00:60+01:00', ''),
  min_success_rate: fc.constantFrom('0.5', '2', '-0.1', 0.5, '1/2'),
};

export const mandateReq = (ct: fc.Arbitrary<string | undefined>, body: fc.Arbitrary<Body>) =>
  fc.tuple(ct, body).map(([c, b]) => new Req('mandates', 'POST', '/v0/mandates', c, b));

// ---- GET|POST /v0/approvals/{id} -----------------------------------------------------------------------------

export const approvalBodies: fc.Arbitrary<Body> = fc.oneof(
  {
    weight: 4,
    arbitrary: mutated([{}, { run: false }, { decision: 'reject' }, { decision: 'approve', run: true }], { run: jsonValue, decision: oddString }).map(bodyOf),
  },
  { weight: 1, arbitrary: jsonValue.map(bodyOf) },
  { weight: 1, arbitrary: poisoned([{ run: true }, { decision: 'reject' }], [['run'], ['decision'], ['x']]) },
  { weight: 1, arbitrary: malformedBody(fc.constant({ run: false })) },
);

/** An approval id: one that exists (pending or already decided by an earlier run), or any segment. */
export const approvalId: fc.Arbitrary<[string, boolean]> = fc.oneof(
  fc.nat().map((n) => [approvals[n % approvals.length]!, true] as [string, boolean]),
  idSegment.map((s) => [s, false] as [string, boolean]),
);

// ---- POST /mcp -----------------------------------------------------------------------------------------------

const TOOL_ARGS: Record<string, Record<string, unknown>[]> = {
  call_agent: [
    { agent: 'examples/echo-upper', input: { text: 'hi' } },
    { capability: 'text.transform', input: { text: 'x' } },
    { agent: 'fixtures/usd', input: { a: [1, { b: 'c' }] } },
    { agent: 'fixtures/units', input: { units: 1, mode: 'ok' }, max_cost: '0.05' },
  ],
  search_agents: [{ q: 'echo' }, { capability: 'text.transform' }],
  get_agent: [{ id: 'examples/echo-upper' }],
  get_receipt: [{ id: 'r_x' }],
  get_approval: [{ id: 'ap_x' }],
  list_approvals: [{}],
  get_budget: [{}],
};
export const TOOLS = Object.keys(TOOL_ARGS);
const toolCall = (args: Record<string, unknown>, name: string, id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

const MESSAGES: Record<string, unknown>[] = [
  ...Object.entries(TOOL_ARGS).flatMap(([name, list]) => list.map((a, i) => toolCall(a, name, i + 1))),
  { jsonrpc: '2.0', id: 'l', method: 'tools/list' },
  { jsonrpc: '2.0', id: 7, method: 'ping' },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'x' } },
  INITIALIZE,
  { jsonrpc: '2.0', id: 5, result: {} },
  { jsonrpc: '2.0', id: 6, error: { code: -1, message: 'x' } },
  { jsonrpc: '2.0', id: 8, method: 'resources/list' },
  { jsonrpc: '2.0', id: 9, method: 'logging/setLevel', params: { level: 'debug' } },
  { jsonrpc: '2.0', id: 10, method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'x' }, argument: { name: 'a', value: 'b' } } },
];

const MCP_POOLS: Record<string, fc.Arbitrary<unknown>> = {
  jsonrpc: fc.constantFrom('2.0', '1.0', 2, '2.0 '),
  id: fc.oneof(fc.integer(), fc.constantFrom('', 'x', null, 1.5, -0, 2 ** 53 + 2), fc.constant(new Raw('1e400'))),
  method: fc.constantFrom(
    'tools/call',
    'tools/list',
    'initialize',
    'ping',
    'notifications/cancelled',
    'notifications/progress',
    'sampling/createMessage',
    'elicitation/create',
    'rpc.x',
    '',
  ),
  name: fc.constantFrom(...TOOLS, 'nope', 'constructor', '__proto__', 'toString', 'hasOwnProperty'),
  agent: CALL_POOLS.agent!,
  capability: CALL_POOLS.capability!,
  text: CALL_POOLS.text!,
  max_cost: CALL_POOLS.max_cost!,
  approval: fc.oneof(
    fc.constant('ap_x'),
    fc.nat().map((n) => approvals[n % approvals.length]!),
  ),
  requestId: fc.oneof(fc.integer(), jsonValue),
  protocolVersion: fc.constantFrom('2025-06-18', '2024-11-05', '1999-01-01', ''),
};

export const mcpMessage = mutated(MESSAGES, MCP_POOLS);
/** A message, or a batch of them. */
export const mcpPayload: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: mcpMessage },
  { weight: 1, arbitrary: fc.array(mcpMessage, { minLength: 1, maxLength: 3 }) },
);

const mcpHeaders: fc.Arbitrary<Record<string, string>> = fc
  .record(
    {
      accept: fc.oneof(
        { weight: 6, arbitrary: fc.constant(MCP_ACCEPT) },
        { weight: 1, arbitrary: fc.constantFrom('application/json', '*/*', 'text/event-stream', 'text/html') },
      ),
      'mcp-protocol-version': fc.oneof(fc.constantFrom('2025-06-18', '2025-03-26', '1.0'), headerValue),
      'x-holon-mandate': fc.oneof(fc.constantFrom('fz/open', 'fz/ask', 'fz/none', ''), headerValue),
      prefer: headerValue,
    },
    { requiredKeys: ['accept'] },
  )
  .map((h) => {
    if (h['mcp-protocol-version'] !== undefined && h['mcp-protocol-version'].length % 3 !== 0) delete h['mcp-protocol-version'];
    return h;
  });

/** Which session a message goes to: one of the open sessions, none, or an unknown one. */
export const sessionHeader: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 5, arbitrary: fc.nat().map((n) => ({ 'mcp-session-id': sessions[n % sessions.length]! })) },
  { weight: 2, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: headerValue.filter((v) => v.trim() !== '').map((v) => ({ 'mcp-session-id': v })) },
);

export const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Raw);

/** The request of a body that must be answered, if it is one well-formed request with a usable id. */
export function requestOf(body: Body): { id: string | number; method: string; params: unknown } | undefined {
  if (body.malformed || !body.object) return undefined;
  const m = JSON.parse(body.text);
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string' || !('id' in m)) return undefined;
  if (!(typeof m.id === 'string' || Number.isSafeInteger(m.id))) return undefined;
  return { id: m.id, method: m.method, params: m.params };
}

export const mcpReq = (ct: fc.Arbitrary<string | undefined>, body: fc.Arbitrary<Body>, session: fc.Arbitrary<Record<string, string>>) =>
  fc.tuple(ct, body, mcpHeaders, session).map(([c, b, h, s]) => new Req('mcp', 'POST', '/mcp', c, b, { ...h, ...s }));

/** Tool calls whose arguments hold NUL, a lone surrogate or deep nesting; traits from the arguments alone. */
export const poisonedToolCalls: fc.Arbitrary<Body> = fc
  .constantFrom(...Object.entries(TOOL_ARGS).flatMap(([name, list]) => list.map((args) => [name, args] as const)))
  .chain(([name, args]) => {
    // Poison a field the tool has (an unknown field is refused for being unknown), or, for `{}`, a new one.
    const paths = pathsOf(args);
    return fc
      .tuple(fc.constantFrom<Path>(...(paths.length ? paths : [['x']])), fc.oneof(fc.constantFrom(...LONE_SURROGATES, ...NULS), deepValue))
      .map(([at, p]) => {
        const poisonedArgs = setAt(args, at, p);
        return { ...bodyOf(toolCall(poisonedArgs, name, 42)), traits: traitsOf(poisonedArgs) };
      });
  })
  .filter((b) => b.traits.nul || b.traits.surrogate || b.traits.depth >= TOO_DEEP);
