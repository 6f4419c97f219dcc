/**
 * Bad input gets a clear 4xx before admission, costs nothing and stores nothing (gateway.md §7; body-guard.ts,
 * shared/core/json-limits.ts): lone UTF-16 surrogates, bodies nested deeper than MAX_JSON_DEPTH, NUL at any depth,
 * bodies that are not declared JSON — on REST and on /mcp (as JSON-RPC errors).
 */
import { describe, expect } from 'vitest';
import { MAX_JSON_DEPTH } from '../../shared/core/json-limits.js';
import { gatewayTest as test } from '../support/gateway-fixture.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { httpStatusOf } from '../../services/api/http-status.js';

const CALL = '{"mandate":"alice/test","agent":"examples/echo-upper","input":INPUT}';
const nested = (levels: number, inner = '{}') => '{"a":'.repeat(levels - 1) + inner + '}'.repeat(levels - 1);

async function raw(g: TestGateway, path: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const res = await fetch(g.url + path, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
}

async function nothingHappened(g: TestGateway): Promise<void> {
  expect(await g.db.knex('calls')).toEqual([]);
  expect(await g.db.knex('holds')).toEqual([]);
  expect(await g.db.knex('approvals')).toEqual([]);
}

describe('bad input is refused before admission', () => {
  test('lone surrogates in mandate, agent, capability or input: 400 with the path, no receipt, no 500', async ({ gateway: g }) => {
    await g.mandate({});
    for (const [body, path] of [
      ['{"mandate":"x\\ud800y","agent":"examples/echo-upper","input":{}}', '$.mandate'],
      ['{"mandate":"alice/test","agent":"examples/\\udc00echo","input":{}}', '$.agent'],
      ['{"mandate":"alice/test","capability":"text.\\ud83d","input":{}}', '$.capability'],
      [CALL.replace('INPUT', '{"text":"a\\ud800"}'), '$.input.text'],
      [CALL.replace('INPUT', '{"\\udfff":"a"}'), '$.input (a field name)'],
    ] as const) {
      const r = await raw(g, '/v0/calls', body);
      expect(r.status, body).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'invalid_request', problems: [{ path, message: expect.stringContaining('lone UTF-16 surrogate') }] });
    }
    // A well-formed pair is an ordinary character.
    const emoji = await raw(g, '/v0/calls', CALL.replace('INPUT', '{"text":"\\ud83d\\ude00"}'));
    expect(emoji.status).toBe(200);
    expect(await g.db.knex('receipts').pluck('status')).toEqual(['succeeded']);
  });

  test(`input nested 10,000 levels: 400 (limit ${MAX_JSON_DEPTH}), also with an Idempotency-Key and under an approval rule`, async ({ gateway: g }) => {
    await g.mandate({ id: 'alice/ask', approval: { above: '0.00' } });
    await g.mandate({});
    const deep = CALL.replace('INPUT', nested(10_000));
    for (const [body, headers] of [
      [deep, {}],
      [deep, { 'idempotency-key': 'deep-1' }],
      [deep.replace('alice/test', 'alice/ask'), {}],
    ] as const) {
      const r = await raw(g, '/v0/calls', body, { 'content-type': 'application/json', ...headers });
      expect(r.status).toBe(400);
      expect(r.body.error.problems[0].message).toBe(`nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`);
    }
    await nothingHappened(g);
    // Exactly at the limit is fine: the body is level 1, the input level 2.
    const ok = await raw(g, '/v0/calls', CALL.replace('INPUT', nested(MAX_JSON_DEPTH - 1)));
    expect(ok.status).toBe(422); // echo-upper wants {text}: admitted, then refused by its schema
  });

  test('NUL at any depth is refused (depth 50; below 200, where the old check stopped looking)', async ({ gateway: g }) => {
    await g.mandate({ approval: { above: '0.00' } });
    const at50 = await raw(g, '/v0/calls', CALL.replace('INPUT', nested(50, '{"t":"a\\u0000"}')));
    expect(at50.status).toBe(400);
    expect(at50.body.error.problems[0]).toMatchObject({ message: 'contains a NUL character' });
    const at250 = await raw(g, '/v0/calls', CALL.replace('INPUT', nested(250, '{"t":"a\\u0000"}')));
    expect(at250.status).toBe(400);
    await nothingHappened(g);
  });

  test('a body not declared JSON is refused 415 on every route: nothing runs, nothing is billed', async ({ gateway: g }) => {
    await g.mandate({});
    const body = CALL.replace('INPUT', '{"text":"x"}');
    const types: Array<Record<string, string>> = [
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'multipart/form-data; boundary=x' },
      {},
    ];
    for (const headers of types) {
      for (const path of ['/v0/calls', '/v0/mandates', '/v0/approvals/a_x', '/v0/admin/credit', '/mcp']) {
        const res = await fetch(g.url + path, { method: 'POST', headers, body: new TextEncoder().encode(body) });
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(415);
      }
    }
    await nothingHappened(g);
    expect(await g.db.knex('receipts')).toEqual([]);
    // Declared JSON with parameters is JSON.
    expect((await raw(g, '/v0/calls', body, { 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
  });

  test('a delegated input an agent built too deep is refused as rejected_input, with its receipt', async ({ gateway: g }) => {
    await g.mandate({ budget: { total: '5.00', currency: 'EUR', fx: { USD: '0.92' } } });
    let input: unknown = {};
    for (let i = 0; i < 5_000; i++) input = { a: input };
    // fixtures/usd takes any object: only the depth limit stands between this input and a run.
    const r = await g.gw.engine.submit({ mandateId: 'alice/test', agent: 'fixtures/usd', input });
    expect(r).toMatchObject({ kind: 'refused', code: 'rejected_input', receipt: { status: 'rejected_input' } });
    expect(r.kind === 'refused' && httpStatusOf(r.code)).toBe(422);
    expect(await g.db.knex('holds')).toEqual([]);
  });

  test('on /mcp: malformed JSON is -32700, too deep or a lone surrogate -32600/-32602, as JSON-RPC errors', async ({ gateway: g }) => {
    const mcp = (body: string, status: number) =>
      raw(g, '/mcp', body, { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }).then((r) => {
        expect(r.status, body.slice(0, 80)).toBe(status);
        expect(r.body.jsonrpc).toBe('2.0');
        return r.body;
      });
    expect((await mcp('{"jsonrpc": ', 400)).error.code).toBe(-32700);
    expect((await mcp(`{"jsonrpc":"2.0","id":7,"method":"ping","params":${nested(10_000)}}`, 400)).error).toMatchObject({ code: -32600 });
    const surrogate = await mcp('{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"call_agent","arguments":{"agent":"a\\ud800"}}}', 400);
    expect(surrogate).toMatchObject({ id: 8, error: { code: -32602, data: { code: 'invalid_request' } } });
    const huge = await raw(g, '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', pad: 'x'.repeat(2_000_000) }), {
      'content-type': 'application/json',
    });
    expect(huge.status).toBe(413);
    expect(huge.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect(huge.text).not.toMatch(/\bat [^ ]+:\d+/);
  });

  test('on /mcp: malformed params of any method are -32602 in plain words, never -32603 with a parser dump', async ({ gateway: g }) => {
    await g.mandate({});
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-holon-mandate': 'alice/test' };
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const opened = await fetch(`${g.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(init) });
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id')!;
    await opened.text();
    for (const message of [
      { ...init, id: 2, params: { ...init.params, clientInfo: 0 } },
      { ...init, id: 3, params: { ...init.params, clientInfo: { name: 'x', version: 0 } } },
      { jsonrpc: '2.0', id: 4, method: 'tools/call' },
    ]) {
      const res = await fetch(`${g.url}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-session-id': session }, body: JSON.stringify(message) });
      const text = await res.text();
      const data = JSON.parse(text.includes('data: ') ? text.slice(text.indexOf('data: ') + 6).split('\n')[0]! : text);
      expect(data, text).toMatchObject({ id: message.id, error: { code: -32602 } });
      expect(data.error.message).not.toMatch(/"expected"|invalid_type/);
    }
  });
});

describe('keys in hosted mode', () => {
  test('the Bearer scheme is case-insensitive; an admin key is "an admin key"', async () => {
    const adminKey = 'k'.repeat(40);
    await useAudited(await startTestGateway({ config: { hosted: true, adminKey } }), async (g) => {
      for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
        const res = await fetch(`${g.url}/v0/accounts`, { headers: { authorization: `${scheme} ${adminKey}` } });
        expect(res.status, scheme).toBe(200);
      }
      const res = await fetch(`${g.url}/v0/calls`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ mandate: 'x/y', agent: 'examples/echo-upper', input: {} }),
      });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/^an admin key cannot/);
    });
  });
});
