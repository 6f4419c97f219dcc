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
 * Reproducible: a fixed seed (printed), FUZZ_SEED=<n> to change it, FUZZ_RUNS=<factor> to run more cases. The
 * requests, the generators of each route and the property runner are tests/support/fuzz-requests.ts'.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { audit } from '../../shared/ledger/audit.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  bodyOf,
  contentType,
  headerValue,
  isJsonType,
  jsonValue,
  LONE_SURROGATES,
  malformedBody,
  mutated,
  NULS,
  nested,
  Raw,
  restHeaders,
  sizedBody,
  WRONG_TYPES,
  type Path,
} from '../support/fuzz-arbitraries.js';
import { ADMIN_KEY, signUp, workMandate } from '../support/hosted.js';
import { checkRest, checkRpc, drainedWithoutLiveHolds, excerpt, rawRequest } from '../support/fuzz-http.js';
import {
  SEED,
  SCALE,
  LIMIT,
  TOO_DEEP,
  Req,
  sendTo,
  expectRest,
  OPEN,
  ASK,
  auditedGateway,
  approvals,
  sessions,
  MCP_ACCEPT,
  INITIALIZE,
  property,
  printCatalogue,
  VALID_CALLS,
  CALL_POOLS,
  callBodies,
  callReq,
  clean,
  JSON_CT,
  poisoned,
  VALID_MANDATES,
  MANDATE_POOLS,
  mandateReq,
  approvalBodies,
  approvalId,
  TOOLS,
  mcpMessage,
  mcpPayload,
  sessionHeader,
  isObj,
  requestOf,
  mcpReq,
  poisonedToolCalls,
} from '../support/fuzz-requests.js';
import type { Schema } from '../support/http.js';
console.log(`fuzz: seed ${SEED} (FUZZ_SEED=<n> to change), runs ×${SCALE} (FUZZ_RUNS)`);
// A property stops generating after 40 s (shrinking a request that hangs costs 12 s a step).
vi.setConfig({ testTimeout: 90_000 });

// ---- the gateway and its fixtures ----------------------------------------------------------------------------

let g: TestGateway;

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
    const r = await g.post<Schema<'CallHeld'>>('/v0/calls', {
      mandate: 'fz/ask',
      agent: i % 2 ? 'fixtures/usd' : 'examples/echo-upper',
      input: i % 2 ? { i } : { text: `t${i}` },
    });
    if (r.status !== 202) throw new Error(`approval ${i}: ${r.status} ${JSON.stringify(r.body)}`);
    approvals.push(r.body.approval.id);
  }
  sessions.push(await openSession('fz/open'), await openSession('fz/ask'));
}

afterAll(printCatalogue);

const restProperty = (arb: fc.Arbitrary<Req>, numRuns: number) =>
  property(arb, numRuns, async (r) => {
    expectRest(r, await sendTo(g, r));
  });

// ---- POST /v0/calls ------------------------------------------------------------------------------------------

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
  const hosted = auditedGateway(() => startTestGateway({ hosted: true, config: { signupCredit: 1_000_000_000n } }));
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
