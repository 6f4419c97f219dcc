/**
 * The client (client/index.js, docs/client.md) against a stand-in `fetch`: what each helper sends, how answers and
 * errors come back (HolonApiError: the API's `{code, message, problems}`, its status and receipt), how `call` follows
 * a call past the synchronous wait and `receipts.pages` follows `next`. The same helpers against a real gateway:
 * tests/integration/client.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createHolonClient, HolonApiError, type Receipt } from 'holon/client';

interface Seen {
  method: string;
  url: string;
  headers: Headers;
  body: string;
  bytes: Uint8Array;
}

/** A `fetch` answering from `answer(request)`; every request it was handed, read. */
function stand(answer: (r: Seen) => Response | Promise<Response>) {
  const seen: Seen[] = [];
  const fetch = async (req: Request) => {
    const bytes = new Uint8Array(await req.arrayBuffer());
    const r = { method: req.method, url: req.url, headers: req.headers, body: new TextDecoder().decode(bytes), bytes };
    seen.push(r);
    return answer(r);
  };
  return { seen, fetch };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

const receipt = (over: Partial<Receipt> = {}): Receipt => ({
  id: 'r_1',
  parent: null,
  mandate: 'alice/work',
  caller: 'alice/assistant',
  agent: 'examples/echo-upper@1.0.0',
  status: 'succeeded',
  reasons: [],
  worst_case: '0.01',
  currency: 'EUR',
  payer: 'alice',
  sub_mandate: null,
  billed: true,
  cost: { own: '0.01', downstream: '0.00', total: '0.01' },
  splits: [{ to: 'examples', amount: '0.009' }],
  approval: null,
  children: [],
  duration_ms: 3,
  created_at: '2026-03-02T10:00:00.000Z',
  signature: 'eyJhbGciOiJFZERTQSJ9..c2lnbmF0dXJl',
  ...over,
});

const CALL = { mandate: 'alice/work', agent: 'examples/echo-upper', input: { text: 'hi' } };

describe('createHolonClient', () => {
  it('sends the key as Bearer, to the base URL (its path prefix kept), through the fetch it is given', async () => {
    const s = stand(() => json(200, { receipts: [] }));
    const holon = createHolonClient({ baseUrl: 'https://gw.example.com/holon/', key: 'hlk_h_x', fetch: s.fetch, headers: { 'x-trace': '1' } });
    expect(await holon.receipts.list()).toEqual({ receipts: [] });
    expect(s.seen[0]).toMatchObject({ method: 'GET', url: 'https://gw.example.com/holon/v0/receipts' });
    expect(s.seen[0]!.headers.get('authorization')).toBe('Bearer hlk_h_x');
    expect(s.seen[0]!.headers.get('x-trace')).toBe('1');
    // No key (a dev gateway): no Authorization header at all.
    const dev = stand(() => json(200, { mandates: [] }));
    await createHolonClient({ baseUrl: 'http://127.0.0.1:8787', fetch: dev.fetch }).mandates.list();
    expect(dev.seen[0]!.headers.has('authorization')).toBe(false);
  });

  it('throws a HolonApiError with the API’s code, message, problems, status and the refused call’s receipt', async () => {
    const problems = [{ path: '$.text', message: 'is required' }];
    const refused = receipt({ status: 'rejected_input', billed: false, cost: { own: '0.00', downstream: '0.00', total: '0.00' }, splits: [] });
    const s = stand(() => json(422, { error: { code: 'rejected_input', message: 'the input does not match', problems }, receipt: refused }));
    const holon = createHolonClient({ baseUrl: 'http://gw', fetch: s.fetch });
    const e = await holon.call(CALL).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(HolonApiError);
    expect(e).toBeInstanceOf(Error);
    if (!(e instanceof HolonApiError)) throw e;
    expect({ name: e.name, status: e.status, code: e.code, message: e.message, problems: e.problems }).toEqual({
      name: 'HolonApiError',
      status: 422,
      code: 'rejected_input',
      message: 'the input does not match',
      problems,
    });
    expect(e.error).toEqual({ code: 'rejected_input', message: 'the input does not match', problems });
    expect(e.receipt).toEqual(refused);
    expect(e.response.status).toBe(422);
  });

  it('an answer without the error shape (a proxy’s page, an empty body) is a HolonApiError too: http_<status>, its text', async () => {
    const s = stand((r) => (r.url.endsWith('/v0/me/agents') ? new Response('<html>Bad Gateway</html>', { status: 502 }) : new Response(null, { status: 503 })));
    const holon = createHolonClient({ baseUrl: 'http://gw', fetch: s.fetch });
    const page = await holon.earnings().catch((x: unknown) => x);
    expect(page).toMatchObject({ status: 502, code: 'http_502', message: 'HTTP 502', problems: [], error: undefined, body: '<html>Bad Gateway</html>' });
    const empty = await holon.mandates.list().catch((x: unknown) => x);
    expect(empty).toMatchObject({ status: 503, code: 'http_503', problems: [], receipt: undefined });
    // The network itself failing is fetch's own error, not an answer.
    const down = createHolonClient({ baseUrl: 'http://gw', fetch: () => Promise.reject(new TypeError('fetch failed')) });
    const e = await down.receipts.get('r_1').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TypeError);
    expect(e).not.toBeInstanceOf(HolonApiError);
  });

  it('call: 200 is the answer; a 202 past the synchronous wait is followed with GET ?wait=60 until the receipt', async () => {
    let polls = 0;
    const s = stand((r) => {
      if (r.method === 'POST') return json(202, { status: 'running', call: { id: 'r_1', status: 'running' } });
      polls++;
      return polls < 3
        ? json(200, { call: { id: 'r_1', status: 'running' } })
        : json(200, { call: { id: 'r_1', status: 'succeeded' }, output: { text: 'HI' }, receipt: receipt() });
    });
    const holon = createHolonClient({ baseUrl: 'http://gw', fetch: s.fetch });
    const answer = await holon.call(CALL, { idempotencyKey: 'once-1' });
    expect(answer.status).toBe('succeeded');
    expect('output' in answer && answer.output).toEqual({ text: 'HI' });
    expect(answer.receipt.cost.own).toBe('0.01');
    expect(s.seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST http://gw/v0/calls',
      'GET http://gw/v0/calls/r_1?wait=60',
      'GET http://gw/v0/calls/r_1?wait=60',
      'GET http://gw/v0/calls/r_1?wait=60',
    ]);
    expect(JSON.parse(s.seen[0]!.body)).toEqual(CALL);
    expect(s.seen[0]!.headers.get('idempotency-key')).toBe('once-1');
    expect(s.seen[0]!.headers.get('prefer')).toBeNull();
  });

  it('call: a run that failed while followed throws as POST would have answered it (502, the receipt’s error)', async () => {
    const failed = receipt({ status: 'failed', error: 'timeout', billed: false, cost: { own: '0.00', downstream: '0.00', total: '0.00' }, splits: [] });
    const s = stand((r) =>
      r.method === 'POST' ? json(202, { call: { id: 'r_1', status: 'queued' } }) : json(200, { call: { id: 'r_1', status: 'failed' }, receipt: failed }),
    );
    const e = await createHolonClient({ baseUrl: 'http://gw', fetch: s.fetch })
      .call(CALL)
      .catch((x: unknown) => x);
    expect(e).toMatchObject({
      name: 'HolonApiError',
      status: 502,
      code: 'timeout',
      message: 'the agent failed: timeout; nothing was charged',
      receipt: failed,
    });
  });

  it('callAsync asks for 202 (Prefer: respond-async); wait long-polls; cancel posts', async () => {
    const s = stand((r) =>
      r.url.endsWith('/cancel')
        ? json(200, { call: { id: 'r_1', status: 'running' }, cancel: 'cancelling' })
        : json(202, { status: 'queued', call: { id: 'r_1', status: 'queued' } }),
    );
    const holon = createHolonClient({ baseUrl: 'http://gw', fetch: s.fetch });
    expect(await holon.callAsync(CALL)).toEqual({ status: 'queued', call: { id: 'r_1', status: 'queued' } });
    expect(s.seen[0]!.headers.get('prefer')).toBe('respond-async');
    await holon.wait('r_1', { seconds: 5 });
    expect(s.seen[1]!.url).toBe('http://gw/v0/calls/r_1?wait=5');
    expect((await holon.cancel('r_1')).cancel).toBe('cancelling');
    expect(s.seen[2]).toMatchObject({ method: 'POST', url: 'http://gw/v0/calls/r_1/cancel' });
  });

  it('receipts.pages follows `next` as `before` to the last page; all() yields every receipt; limit may be a number', async () => {
    const pages: Record<string, unknown> = {
      '': { receipts: [receipt({ id: 'r_3' }), receipt({ id: 'r_2' })], next: 'r_2' },
      r_2: { receipts: [receipt({ id: 'r_1' })] },
    };
    const s = stand((r) => json(200, pages[new URL(r.url).searchParams.get('before') ?? '']));
    const holon = createHolonClient({ baseUrl: 'http://gw', fetch: s.fetch });
    const ids: string[] = [];
    for await (const r of holon.receipts.all({ status: 'succeeded', limit: 2 })) ids.push(r.id);
    expect(ids).toEqual(['r_3', 'r_2', 'r_1']);
    expect(s.seen.map((r) => r.url)).toEqual(['http://gw/v0/receipts?status=succeeded&limit=2', 'http://gw/v0/receipts?status=succeeded&before=r_2&limit=2']);
  });

  it('a mandate id keeps its "/" in the path; an agent is ns/name; approvals and mandates are unwrapped', async () => {
    const s = stand((r) => {
      if (r.url.includes('/v0/approvals?')) return json(200, { approvals: [] });
      if (r.url.endsWith('/credential')) return json(200, { agent: 'bob/tables', credential: { set: r.method === 'PUT' } });
      return json(200, { mandate: { id: 'alice/sandbox' }, budget: { currency: 'EUR', total: '1', spent: '0', reserved: '0', remaining: '1' } });
    });
    const holon = createHolonClient({ baseUrl: 'http://gw', fetch: s.fetch });
    await holon.mandates.get('alice/sandbox');
    expect(s.seen[0]!.url).toBe('http://gw/v0/mandates/alice/sandbox');
    await expect(holon.mandates.get('sandbox')).rejects.toThrow(TypeError);
    expect(await holon.approvals.list({ mandate: 'alice/work' })).toEqual([]);
    expect((await holon.credential.set('bob/tables', 'sk_1')).credential.set).toBe(true);
    expect(s.seen[2]).toMatchObject({ method: 'PUT', url: 'http://gw/v0/agents/bob/tables/credential', body: '{"token":"sk_1"}' });
    await holon.credential.delete('bob/tables');
    expect(s.seen[3]).toMatchObject({ method: 'DELETE', url: 'http://gw/v0/agents/bob/tables/credential', body: '' });
    await expect(holon.credential.delete('tables')).rejects.toThrow(TypeError);
  });

  it('files.upload sends the bytes as they are, with their content type', async () => {
    const s = stand(() =>
      json(201, { id: 'f_1', handle: 'holon://files/f_1', size: 4, sha256: 'x', content_type: 'text/csv', expires_at: '2026-03-03T10:00:00Z' }),
    );
    const holon = createHolonClient({ baseUrl: 'http://gw', fetch: s.fetch });
    expect((await holon.files.upload(Buffer.from([0x61, 0x2c, 0x62, 0x0a]), { contentType: 'text/csv' })).handle).toBe('holon://files/f_1');
    expect(s.seen[0]!.headers.get('content-type')).toBe('text/csv');
    expect([...s.seen[0]!.bytes]).toEqual([0x61, 0x2c, 0x62, 0x0a]);
    await holon.files.upload(new Blob([new Uint8Array([1, 2, 3])]));
    expect(s.seen[1]!.headers.get('content-type')).toBe('application/octet-stream');
    expect([...s.seen[1]!.bytes]).toEqual([1, 2, 3]);
  });
});
