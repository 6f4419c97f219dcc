/**
 * Fuzzing the HTTP API (fast-check) against a whole gateway on real Postgres and Redis: POST /v0/calls,
 * POST /v0/mandates, GET|POST /v0/approvals/{id}, and POST /mcp (in a session and without one).
 *
 * What every answer must be, whatever the request:
 * - never a 5xx, never a stack trace or a database or runtime error in the body;
 * - REST: every 4xx is `{error: {code, message}}`; a body-carrying route refuses a non-JSON Content-Type with 415,
 *   a body over HOLON_BODY_LIMIT with 413, malformed JSON with 400, and NUL characters, lone UTF-16 surrogates and
 *   nesting 1000 levels deep or more with 400 naming the path;
 * - /mcp: every body is JSON-RPC 2.0 (malformed JSON is -32700), never -32603 nor a tool result `gateway_error`,
 *   every request in a 200 gets its answer, and tool arguments with NUL, lone surrogates or 1000 levels of nesting
 *   are `isError` `invalid_request`;
 * - afterwards every call has finished, no hold is live and the ledger audit is clean.
 *
 * Reproducible: a fixed seed (printed), FUZZ_SEED=<n> to change it, FUZZ_RUNS=<factor> to run more cases.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { audit } from '../../shared/ledger/audit.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import {
  bodyOf,
  contentType,
  deepValue,
  headerValue,
  idSegment,
  isJsonType,
  jsonValue,
  LONE_SURROGATES,
  malformedBody,
  mutated,
  NULS,
  nested,
  oddString,
  pathsOf,
  Raw,
  restHeaders,
  sizedBody,
  traitsOf,
  WRONG_TYPES,
  type Body,
  type Path,
} from '../support/fuzz-arbitraries.js';
import { ADMIN_KEY, signUp, startHostedGateway, workMandate } from '../support/hosted.js';
import { checkRest, checkRpc, drainedWithoutLiveHolds, excerpt, problemPaths, rawRequest, type RawReply } from '../support/fuzz-http.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 20_250_611;
const SCALE = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 1;
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
const LIMIT = 1_048_576;
/** Nesting this deep (or deeper) must be refused. */
const TOO_DEEP = 1000;

console.log(`fuzz: seed ${SEED} (FUZZ_SEED=<n> to change), runs ×${SCALE} (FUZZ_RUNS)`);
// A property stops generating after 40 s (shrinking a request that hangs costs 12 s a step).
vi.setConfig({ testTimeout: 90_000 });

// ---- requests ------------------------------------------------------------------------------------------------

type Route = 'calls' | 'mandates' | 'approval' | 'approval-get' | 'mcp';

/** One request, printed as a curl line when fast-check reports it. */
class Req {
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
async function sendTo(to: TestGateway, r: Req): Promise<RawReply> {
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
function expectRest(r: Req, reply: RawReply): void {
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

// ---- the gateway and its fixtures ----------------------------------------------------------------------------

const OPEN = {
  id: 'fz/open',
  issuer: 'fz',
  grantee: 'fz/assistant',
  allow: { agents: ['examples/*', 'fixtures/*'], capabilities: ['text.*', 'test.*'] },
  budget: { total: '500.00', currency: 'EUR', fx: { USD: '0.92' } },
};
/** Every call asks a human first: its input is kept (jsonb) until decided. */
const ASK = { ...OPEN, id: 'fz/ask', approval: { above: '0.00' } };

/**
 * A gateway for the tests of the enclosing describe: started before them, handed to `useAudited` (ledger audit
 * after), stopped after them once every call has finished and no hold is live.
 */
function auditedGateway(start: () => Promise<TestGateway & { stop(): Promise<void> }>): () => TestGateway {
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

let g: TestGateway;
/** Approvals made before the fuzzing (decided or not by it). */
const approvals: string[] = [];
/** MCP sessions opened before the fuzzing: under fz/open and under fz/ask. */
const sessions: string[] = [];

const MCP_ACCEPT = 'application/json, text/event-stream';
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1.0.0' } },
};

async function openSession(mandate: string): Promise<string> {
  const init = await rawRequest(g.url, {
    method: 'POST',
    path: '/mcp',
    headers: { 'content-type': 'application/json', accept: MCP_ACCEPT, 'x-holon-mandate': mandate },
    body: JSON.stringify(INITIALIZE),
  });
  const id = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof id !== 'string') throw new Error(`initialize failed: ${excerpt(init)}`);
  const done = await rawRequest(g.url, {
    method: 'POST',
    path: '/mcp',
    headers: { 'content-type': 'application/json', accept: MCP_ACCEPT, 'mcp-session-id': id },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  if (done.status !== 202) throw new Error(`notifications/initialized failed: ${excerpt(done)}`);
  return id;
}

const devGateway = () => {
  const dev = auditedGateway(() => startTestGateway({ config: { signupCredit: 10_000_000_000n, syncWaitS: 8, mcpMandate: 'fz/open' } }));
  beforeAll(async () => {
    g = dev();
    await devFixtures();
  });
};

devGateway();

async function devFixtures(): Promise<void> {
  for (const doc of [OPEN, ASK]) {
    const r = await g.post('/v0/mandates', doc);
    if (r.status !== 201) throw new Error(`mandate ${doc.id}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  for (let i = 0; i < 12; i++) {
    const r = await g.post('/v0/calls', { mandate: 'fz/ask', agent: i % 2 ? 'fixtures/usd' : 'examples/echo-upper', input: i % 2 ? { i } : { text: `t${i}` } });
    if (r.status !== 202) throw new Error(`approval ${i}: ${r.status} ${JSON.stringify(r.body)}`);
    approvals.push(r.body.approval.id);
  }
  sessions.push(await openSession('fz/open'), await openSession('fz/ask'));
}

afterAll(() => {
  if (CATALOGUE) {
    console.log(`fuzz: ${catalogue.size} distinct failures`);
    for (const [key, { count, examples }] of catalogue) console.log(`\n## ${key} (×${count})\n${examples.join('\n')}`);
  }
});

/**
 * FUZZ_CATALOGUE=1: instead of stopping at the first failure (and shrinking it), run every case and print one
 * example of each distinct failure (what was expected, the status, the error code) after the file.
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

const property = <T>(arb: fc.Arbitrary<T>, numRuns: number, check: (v: T) => Promise<void>) =>
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

const restProperty = (arb: fc.Arbitrary<Req>, numRuns: number) =>
  property(arb, numRuns, async (r) => {
    expectRest(r, await sendTo(g, r));
  });

// ---- POST /v0/calls ------------------------------------------------------------------------------------------

const VALID_CALLS: Record<string, unknown>[] = [
  { mandate: 'fz/open', agent: 'examples/echo-upper', input: { text: 'hi' } },
  { mandate: 'fz/open', capability: 'text.transform', input: { text: 'hi' } },
  { mandate: 'fz/open', agent: 'fixtures/usd', input: { any: ['thing', 1] } },
  { mandate: 'fz/ask', agent: 'fixtures/usd', input: { kept: { until: 'decided' } } },
  { mandate: 'fz/open', agent: 'fixtures/units', input: { units: 2, mode: 'ok' }, max_cost: '0.10' },
  { mandate: 'fz/open', agent: 'examples/flaky', input: { mode: 'crash' } },
  { mandate: 'fz/open', agent: 'examples/echo-upper@^1.0.0', input: { text: 'x' }, callback_url: 'http://127.0.0.1:9/cb' },
];

const CALL_POOLS: Record<string, fc.Arbitrary<unknown>> = {
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

const callBodies = mutated(VALID_CALLS, CALL_POOLS);
const callReq = (ct: fc.Arbitrary<string | undefined>, body: fc.Arbitrary<Body>, headers: fc.Arbitrary<Record<string, string>> = fc.constant({})) =>
  fc.tuple(ct, body, headers).map(([c, b, h]) => new Req('calls', 'POST', '/v0/calls', c, b, h));

/** Only values without NUL, lone surrogates or deep nesting: for the properties that look for other defects. */
const clean = (b: Body) => !b.traits.nul && !b.traits.surrogate && b.traits.depth < TOO_DEEP;
const JSON_CT = fc.constantFrom('application/json', 'application/json; charset=utf-8');

/** Values with a NUL, a lone surrogate, or nesting: at the top, in keys, in each field, deep inside `input`. */
function poisoned(templates: Record<string, unknown>[], fields: Path[]): fc.Arbitrary<Body> {
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

describe('POST /v0/calls', () => {
  test('valid calls mutated field by field, with clean strings: never a 5xx, every 4xx in the error shape', async () => {
    await restProperty(callReq(JSON_CT, callBodies.map(bodyOf).filter(clean), restHeaders), 150);
  });

  test('any JSON value as the body', async () => {
    await restProperty(callReq(JSON_CT, jsonValue.map(bodyOf).filter(clean)), 60);
  });

  test('lone surrogates, NUL characters (also below depth 200) and 10,000 levels of nesting are 400 with a path', async () => {
    const fields: Path[] = [['mandate'], ['agent'], ['capability'], ['input'], ['input', 'text'], ['input', 'kept', 'until'], ['max_cost'], ['approval']];
    // Only valid headers here (an invalid Idempotency-Key is a 400 of its own): a fresh key, or async.
    const headers = fc.record({ 'idempotency-key': fc.uuid(), prefer: fc.constant('respond-async') }, { requiredKeys: [] });
    await restProperty(callReq(JSON_CT, poisoned(VALID_CALLS, fields), headers), 150);
  });

  test('malformed JSON is 400', async () => {
    await restProperty(callReq(JSON_CT, malformedBody(callBodies)), 60);
  });

  test('a Content-Type other than JSON is 415', async () => {
    await restProperty(callReq(fc.constantFrom(...WRONG_TYPES, undefined), fc.constantFrom(...VALID_CALLS).map(bodyOf)), 30);
  });

  test('bodies near and over HOLON_BODY_LIMIT: 413 above it, an answer below it', async () => {
    const at: Path[] = [['input', 'text'], ['mandate'], ['agent'], ['input', 'big'], ['unknown']];
    const sizes = [LIMIT - 1, LIMIT, LIMIT + 1, LIMIT + 4096, 2 * LIMIT, 300_000, 10_100];
    const body = fc.tuple(fc.constantFrom(...VALID_CALLS), fc.constantFrom(...at), fc.constantFrom(...sizes)).map(([t, p, n]) => sizedBody(t, p, n));
    await restProperty(callReq(JSON_CT, body), 25);
  });

  test('odd header values: Idempotency-Key, Prefer, delegation tokens, latin-1', async () => {
    const headers = fc.record({ 'idempotency-key': headerValue, prefer: headerValue, 'x-holon-delegation': headerValue }, { requiredKeys: [] });
    await restProperty(callReq(JSON_CT, fc.constantFrom(...VALID_CALLS).map(bodyOf), headers), 60);
  });
});

// ---- POST /v0/mandates ---------------------------------------------------------------------------------------

const VALID_MANDATES: Record<string, unknown>[] = [
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

const MANDATE_POOLS: Record<string, fc.Arbitrary<unknown>> = {
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

const mandateReq = (ct: fc.Arbitrary<string | undefined>, body: fc.Arbitrary<Body>) =>
  fc.tuple(ct, body).map(([c, b]) => new Req('mandates', 'POST', '/v0/mandates', c, b));

describe('POST /v0/mandates', () => {
  test('valid mandates mutated field by field, with clean strings', async () => {
    await restProperty(mandateReq(JSON_CT, mutated(VALID_MANDATES, MANDATE_POOLS).map(bodyOf).filter(clean)), 120);
  });

  test('lone surrogates, NUL characters and deep nesting anywhere are 400 with a path', async () => {
    const fields: Path[] = [
      ['id'],
      ['issuer'],
      ['grantee'],
      ['budget', 'total'],
      ['budget', 'fx'],
      ['allow', 'agents', 0],
      ['require', 'license', 0],
      ['expires_at'],
      ['approval'],
    ];
    await restProperty(mandateReq(JSON_CT, poisoned(VALID_MANDATES, fields)), 60);
  });

  test('malformed JSON is 400, bodies over the limit 413', async () => {
    const body = fc.oneof(
      malformedBody(fc.constantFrom(...VALID_MANDATES)),
      fc.constantFrom(LIMIT - 1, LIMIT + 1, 2 * LIMIT).map((n) => sizedBody(OPEN, ['issuer'], n)),
    );
    await restProperty(mandateReq(JSON_CT, body), 40);
  });

  test('a Content-Type other than JSON is 415', async () => {
    await restProperty(mandateReq(fc.constantFrom(...WRONG_TYPES, undefined), fc.constantFrom(...VALID_MANDATES).map(bodyOf)), 20);
  });
});

// ---- GET|POST /v0/approvals/{id} -----------------------------------------------------------------------------

const approvalBodies: fc.Arbitrary<Body> = fc.oneof(
  {
    weight: 4,
    arbitrary: mutated([{}, { run: false }, { decision: 'reject' }, { decision: 'approve', run: true }], { run: jsonValue, decision: oddString }).map(bodyOf),
  },
  { weight: 1, arbitrary: jsonValue.map(bodyOf) },
  { weight: 1, arbitrary: poisoned([{ run: true }, { decision: 'reject' }], [['run'], ['decision'], ['x']]) },
  { weight: 1, arbitrary: malformedBody(fc.constant({ run: false })) },
);

/** An approval id: one that exists (pending or already decided by an earlier run), or any segment. */
const approvalId: fc.Arbitrary<[string, boolean]> = fc.oneof(
  fc.nat().map((n) => [approvals[n % approvals.length]!, true] as [string, boolean]),
  idSegment.map((s) => [s, false] as [string, boolean]),
);

describe('/v0/approvals/{id}', () => {
  test('GET with any id', async () => {
    await restProperty(
      approvalId.map(([id, known]) => new Req('approval-get', 'GET', `/v0/approvals/${id}`, undefined, undefined, {}, known)),
      80,
    );
  });

  test('POST any body to any id (approving runs the call)', async () => {
    await restProperty(
      fc
        .tuple(approvalId, JSON_CT, approvalBodies, fc.option(fc.constant({ prefer: 'respond-async' }), { nil: undefined }))
        .map(([[id, known], c, b, h]) => new Req('approval', 'POST', `/v0/approvals/${id}`, c, b, h ?? {}, known)),
      100,
    );
  });
});

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
const TOOLS = Object.keys(TOOL_ARGS);
const toolCall = (args: Record<string, unknown>, name: string, id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

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

const mcpMessage = mutated(MESSAGES, MCP_POOLS);
/** A message, or a batch of them. */
const mcpPayload: fc.Arbitrary<unknown> = fc.oneof(
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
const sessionHeader: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 5, arbitrary: fc.nat().map((n) => ({ 'mcp-session-id': sessions[n % sessions.length]! })) },
  { weight: 2, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: headerValue.filter((v) => v.trim() !== '').map((v) => ({ 'mcp-session-id': v })) },
);

const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Raw);

/** The request of a body that must be answered, if it is one well-formed request with a usable id. */
function requestOf(body: Body): { id: string | number; method: string; params: unknown } | undefined {
  if (body.malformed || !body.object) return undefined;
  const m = JSON.parse(body.text);
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string' || !('id' in m)) return undefined;
  if (!(typeof m.id === 'string' || Number.isSafeInteger(m.id))) return undefined;
  return { id: m.id, method: m.method, params: m.params };
}

async function mcpProperty(arb: fc.Arbitrary<Req>, numRuns: number): Promise<void> {
  await property(arb, numRuns, async (r) => {
    const reply = await sendTo(g, r);
    const what = String(r[fc.toStringMethod]());
    const messages = checkRpc(reply, what);
    const where = `${what} → ${excerpt(reply)}`;
    const body = r.body!;
    if (body.malformed && isJsonType(r.ct)) {
      expect(reply.status, `malformed JSON on /mcp: ${where}`).toBe(400);
      expect((messages[0] as any)?.error?.code, `malformed JSON on /mcp is a JSON-RPC parse error: ${where}`).toBe(-32700);
      return;
    }
    const req = requestOf(body);
    if (reply.status !== 200 || !req || !r.headers['mcp-session-id'] || !sessions.includes(r.headers['mcp-session-id'])) return;
    const answer = (messages as any[]).find((m) => m && m.id === req.id && ('result' in m || 'error' in m));
    expect(answer, `request ${JSON.stringify(req.id)} got no answer: ${where}`).toBeDefined();
    // A tool call's body traits are those of its arguments (poisonedToolCalls); other bodies here are clean.
    const t = body.traits;
    const toolCallOf = req.method === 'tools/call' && isObj(req.params) && TOOLS.includes(req.params.name) && isObj(req.params.arguments);
    if (toolCallOf && (t.nul || t.surrogate || t.depth >= TOO_DEEP)) {
      expect(answer.result?.isError, `tool arguments with NUL, a lone surrogate or deep nesting are isError: ${where}`).toBe(true);
      expect(answer.result?.structuredContent?.error?.code, `…with invalid_request: ${where}`).toBe('invalid_request');
    }
  });
}

const mcpReq = (ct: fc.Arbitrary<string | undefined>, body: fc.Arbitrary<Body>, session: fc.Arbitrary<Record<string, string>>) =>
  fc.tuple(ct, body, mcpHeaders, session).map(([c, b, h, s]) => new Req('mcp', 'POST', '/mcp', c, b, { ...h, ...s }));

/** Tool calls whose arguments hold NUL, a lone surrogate or deep nesting; traits from the arguments alone. */
const poisonedToolCalls: fc.Arbitrary<Body> = fc
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

describe('POST /mcp', () => {
  test('random JSON-RPC messages in a session, without one, and with an unknown one', async () => {
    await mcpProperty(mcpReq(JSON_CT, mcpPayload.map(bodyOf).filter(clean), sessionHeader), 150);
  });

  test('any JSON value as the body, and odd content types', async () => {
    await mcpProperty(mcpReq(contentType, fc.oneof(jsonValue, mcpPayload).map(bodyOf).filter(clean), sessionHeader), 60);
  });

  test('malformed JSON is a JSON-RPC parse error (-32700)', async () => {
    await mcpProperty(mcpReq(JSON_CT, malformedBody(mcpMessage), sessionHeader), 40);
  });

  test('tool arguments with NUL characters, lone surrogates or deep nesting are isError invalid_request', async () => {
    const inSession = fc.nat().map((n) => ({ 'mcp-session-id': sessions[n % sessions.length]! }));
    await mcpProperty(
      fc.tuple(JSON_CT, poisonedToolCalls, inSession).map(([c, b, s]) => new Req('mcp', 'POST', '/mcp', c, b, { accept: MCP_ACCEPT, ...s })),
      80,
    );
  });

  test('whole messages nested 10,000 levels deep, or with NUL and lone surrogates in the envelope', async () => {
    const envelope = fc.oneof(
      fc.constantFrom(1000, 10_000).map((d) => nested(d, 'array', '1')),
      fc.constantFrom(1000, 10_000).map((d) => new Raw(`{"jsonrpc":"2.0","id":1,"method":"ping","params":${nested(d, 'object', '1').text}}`, { depth: d + 1 })),
      fc.constantFrom(...LONE_SURROGATES, ...NULS).map((s) => ({ jsonrpc: '2.0', id: s, method: 'ping' })),
      fc.constantFrom(...LONE_SURROGATES, ...NULS).map((s) => ({ jsonrpc: '2.0', id: 3, method: `tools/${s}` })),
    );
    // Only the generic properties here: the envelope is the SDK's to refuse.
    await mcpProperty(
      mcpReq(
        JSON_CT,
        envelope.map((v) => ({ ...bodyOf(v), traits: { nul: false, surrogate: false, depth: 0 } })),
        sessionHeader,
      ),
      20,
    );
  });
});

// ---- afterwards ----------------------------------------------------------------------------------------------

describe('after the fuzzing', () => {
  test('every call finishes, no hold is live, the ledger audit is clean', async () => {
    await drainedWithoutLiveHolds(g);
    const report = await audit(g.db.knex);
    expect(report.problems).toEqual([]);
  });
});

// ---- hosted: keys ------------------------------------------------------------------------------------------

describe("hosted mode: any Authorization header, a human's own mandates", () => {
  const hosted = auditedGateway(() => startHostedGateway({ signupCredit: 1_000_000_000n }));
  const keys = { human: '', agent: '' };
  beforeAll(async () => {
    const account = await signUp(hosted().url, 'fuzzer');
    keys.human = account.human;
    keys.agent = (await workMandate(hosted().url, account)).agent;
  });

  /** Keys as sent, then broken: a character changed, cut, doubled, another scheme, the admin key, none. */
  const authorization: fc.Arbitrary<string | undefined> = fc.oneof(
    fc
      .constantFrom(
        () => `Bearer ${keys.agent}`,
        () => `Bearer ${keys.human}`,
        () => `bearer ${keys.agent}`,
        () => `Bearer  ${keys.agent}`,
        () => `Bearer ${keys.agent}x`,
        () => `Bearer ${keys.agent.slice(0, -1)}`,
        () => `Bearer ${keys.agent.slice(0, 15)}`,
        () => `Bearer ${keys.agent.replace('hlk_a_', 'hlk_h_')}`,
        () => `Bearer ${keys.agent},${keys.human}`,
        () => `Basic ${Buffer.from(`x:${keys.agent}`).toString('base64')}`,
        () => `Bearer ${ADMIN_KEY}`,
        () => undefined,
      )
      .map((f) => f()),
    headerValue.map((v) => `Bearer ${v}`),
    headerValue,
  );

  const HOSTED_CALLS: Record<string, unknown>[] = [
    { agent: 'examples/echo-upper', input: { text: 'hi' } },
    { mandate: 'fuzzer/work', capability: 'text.transform', input: { text: 'hi' } },
  ];
  const HOSTED_MANDATES: Record<string, unknown>[] = [
    { id: 'm', grantee: 'fuzzer/assistant', allow: { agents: ['examples/*'] }, budget: { total: '1.00' } },
    { id: 'fuzzer/n', issuer: 'fuzzer', grantee: 'fuzzer/a', allow: { capabilities: ['text.*'] }, budget: { total: '1.00', currency: 'EUR' } },
  ];

  test('calls and mandates with any Authorization: never a 5xx, every 4xx in the error shape', async () => {
    const body = fc.oneof(
      mutated(HOSTED_CALLS, CALL_POOLS).map((b) => ['calls', b] as const),
      mutated(HOSTED_MANDATES, MANDATE_POOLS).map((b) => ['mandates', b] as const),
    );
    const arb = fc
      .tuple(authorization, body)
      .map(([auth, [route, b]]) => new Req(route, 'POST', `/v0/${route}`, 'application/json', bodyOf(b), auth === undefined ? {} : { authorization: auth }));
    await property(
      arb.filter((r) => clean(r.body!)),
      100,
      async (r) => {
        checkRest(await sendTo(hosted(), r), String(r[fc.toStringMethod]()));
      },
    );
  });

  test("a human's mandates, mutated and poisoned: 400 with a path for NUL, lone surrogates, deep nesting", async () => {
    const body = fc.oneof(
      mutated(HOSTED_MANDATES, MANDATE_POOLS).map(bodyOf),
      poisoned(HOSTED_MANDATES, [['id'], ['grantee'], ['budget', 'total'], ['budget', 'currency'], ['allow', 'agents', 0]]),
    );
    await property(body, 80, async (b) => {
      const r = new Req('mandates', 'POST', '/v0/mandates', 'application/json', b, { authorization: `Bearer ${keys.human}` });
      expectRest(r, await sendTo(hosted(), r));
    });
  });

  test('/mcp initialize with any Authorization', async () => {
    const arb = authorization.map(
      (auth) =>
        new Req('mcp', 'POST', '/mcp', 'application/json', bodyOf(INITIALIZE), { accept: MCP_ACCEPT, ...(auth === undefined ? {} : { authorization: auth }) }),
    );
    await property(arb, 40, async (r) => {
      checkRpc(await sendTo(hosted(), r), String(r[fc.toStringMethod]()));
    });
  });

  test('afterwards: every call finishes, no hold is live, the ledger audit is clean', async () => {
    await drainedWithoutLiveHolds(hosted());
    expect((await audit(hosted().db.knex)).problems).toEqual([]);
  });
});
