/**
 * The MCP runtime (shared/runtimes/mcp/, gateway.md §6 "MCP agents"), what goes in and what comes out, against real
 * MCP servers on 127.0.0.1 (tests/support/mcp-test-servers.ts): the output taken from a tool result, units and quotes
 * from `_meta`, errors the agent declares and those it does not; the arguments, `_meta` and headers of the request;
 * resumable streams. Timeouts, cancellation, broken servers and sessions: runtime-mcp-connections.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { perTestCleanups } from '../support/cleanups.js';
import { buildManifest } from '../support/manifest-builder.js';
import { agent, context, echo, mcpHarness, messageOf, scripted, structured, type Tool } from '../support/mcp-test-servers.js';

const { defer } = perTestCleanups();
const { startMcpServer, startRawServer, runtime } = mcpHarness(defer);

describe('mcp runtime: the result', () => {
  for (const json of [false, true]) {
    it(`takes the output from structuredContent (${json ? 'JSON' : 'SSE'} responses)`, async () => {
      const s = await startMcpServer({ run: () => ({ content: [{ type: 'text', text: 'not the output' }], structuredContent: { rows: [1, 2] } }) }, { json });
      expect(await runtime().run(agent(s.url), { file: 'a.pdf' }, context())).toEqual({ kind: 'output', output: { rows: [1, 2] } });
    });
  }

  it('else parses the first text block as JSON', async () => {
    const s = await startMcpServer({
      run: () => ({
        content: [
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'text', text: '{"rows":[3]}' },
          { type: 'text', text: '"second"' },
        ],
      }),
      scalar: () => ({ content: [{ type: 'text', text: '42' }] }),
    });
    const rt = runtime();
    expect(await rt.run(agent(s.url), {}, context())).toEqual({ kind: 'output', output: { rows: [3] } });
    expect(await rt.run(agent(s.url, 'scalar'), {}, context())).toEqual({ kind: 'output', output: 42 });
  });

  it('is agent_error when the text is not JSON, or when there is neither structuredContent nor text', async () => {
    const s = await startMcpServer({
      prose: () => ({ content: [{ type: 'text', text: 'Here are your rows: 1, 2' }] }),
      image: () => ({ content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] }),
      empty: () => ({ content: [] }),
    });
    const rt = runtime();
    const prose = await rt.run(agent(s.url, 'prose'), {}, context());
    expect(prose).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(prose)).toMatch(/not JSON/);
    for (const tool of ['image', 'empty']) {
      const r = await rt.run(agent(s.url, tool), {}, context());
      expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
      expect(messageOf(r)).toMatch(/neither structuredContent nor a text block/);
    }
  });

  it('turns isError + structuredContent.error.code into an error result, with its message and units', async () => {
    const s = await startMcpServer({
      run: () => ({
        isError: true,
        content: [{ type: 'text', text: 'no table on page 1' }],
        structuredContent: { error: { code: 'no_table_found', message: 'no table on page 1' } },
        _meta: { 'holon/units': 2 },
      }),
      bare: () => ({ isError: true, content: [], structuredContent: { error: { code: 'rate_limited' } } }),
      long: () => ({ isError: true, content: [], structuredContent: { error: { code: 'x', message: 'm'.repeat(5000) } } }),
    });
    const rt = runtime();
    expect(await rt.run(agent(s.url), {}, context())).toEqual({ kind: 'error', code: 'no_table_found', message: 'no table on page 1', units: 2n });
    expect(await rt.run(agent(s.url, 'bare'), {}, context())).toEqual({ kind: 'error', code: 'rate_limited' });
    const long = await rt.run(agent(s.url, 'long'), {}, context());
    expect(long).toMatchObject({ kind: 'error', code: 'x' });
    expect(messageOf(long).length).toBeLessThanOrEqual(1000);
  });

  it('is agent_error for isError without a string code', async () => {
    const s = await startMcpServer({
      text: () => ({ isError: true, content: [{ type: 'text', text: 'something broke' }] }),
      numeric: () => ({ isError: true, content: [], structuredContent: { error: { code: 42 } } }),
      flat: () => ({ isError: true, content: [], structuredContent: { code: 'no_table_found' } }),
    });
    const rt = runtime();
    const text = await rt.run(agent(s.url, 'text'), {}, context());
    expect(text).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(text)).toMatch(/without a code.*something broke/);
    for (const tool of ['numeric', 'flat']) {
      expect(await rt.run(agent(s.url, tool), {}, context())).toMatchObject({ kind: 'failure', code: 'agent_error' });
    }
  });

  it('reads units and a quote from _meta', async () => {
    const s = await startMcpServer({
      units: () => structured({ pages: 3 }, { 'holon/units': 3 }),
      digits: () => structured({ pages: 12 }, { 'holon/units': '12000000000000000000' }),
      zero: () => structured({}, { 'holon/units': 0 }),
      quote: () => structured({ quoted: true }, { 'holon/quote': '0.25' }),
      both: () => structured({}, { 'holon/units': 7, 'holon/quote': '12.000001', other: 'ignored' }),
    });
    const rt = runtime();
    expect(await rt.run(agent(s.url, 'units'), {}, context())).toEqual({ kind: 'output', output: { pages: 3 }, units: 3n });
    expect(await rt.run(agent(s.url, 'digits'), {}, context())).toEqual({ kind: 'output', output: { pages: 12 }, units: 12_000_000_000_000_000_000n });
    expect(await rt.run(agent(s.url, 'zero'), {}, context())).toEqual({ kind: 'output', output: {}, units: 0n });
    expect(await rt.run(agent(s.url, 'quote'), {}, context())).toEqual({ kind: 'output', output: { quoted: true }, quote: 250_000n });
    expect(await rt.run(agent(s.url, 'both'), {}, context())).toEqual({ kind: 'output', output: {}, units: 7n, quote: 12_000_001n });
  });

  it('is agent_error for invalid units or quotes, even on an error result', async () => {
    const bad: Array<Record<string, unknown>> = [
      { 'holon/units': -1 },
      { 'holon/units': 1.5 },
      { 'holon/units': '1.5' },
      { 'holon/units': '007' },
      { 'holon/units': 'three' },
      { 'holon/units': null },
      { 'holon/units': 2 ** 53 },
      { 'holon/quote': 0.25 },
      { 'holon/quote': '0.1234567' },
      { 'holon/quote': '-1' },
      { 'holon/quote': '1e3' },
    ];
    const tools: Record<string, Tool> = {};
    bad.forEach((meta, i) => (tools[`t${i}`] = () => structured({ ok: true }, meta)));
    tools.err = () => ({ isError: true, content: [], structuredContent: { error: { code: 'declared' } }, _meta: { 'holon/units': 'many' } });
    const s = await startMcpServer(tools);
    const rt = runtime();
    for (const name of Object.keys(tools)) {
      const r = await rt.run(agent(s.url, name), {}, context());
      expect(r, name).toMatchObject({ kind: 'failure', code: 'agent_error' });
      expect(messageOf(r), name).toMatch(/holon\/(units|quote)/);
    }
  });

  it('is agent_error, with a short message, for a JSON-RPC error (unknown tool, a tool that throws)', async () => {
    const s = await startMcpServer({
      throws: () => {
        throw new Error(`database exploded ${'!'.repeat(2000)}`);
      },
    });
    const rt = runtime();
    const unknown = await rt.run(agent(s.url, 'nope'), {}, context());
    expect(unknown).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(unknown)).toMatch(/JSON-RPC error.*Unknown tool: nope/);
    const throws = await rt.run(agent(s.url, 'throws'), {}, context());
    expect(throws).toMatchObject({ kind: 'failure', code: 'agent_error' });
    expect(messageOf(throws)).toMatch(/database exploded/);
    expect(messageOf(throws).length).toBeLessThanOrEqual(200);
  });

  it('is agent_error for a result that is not a CallToolResult', async () => {
    const url = await startRawServer(
      scripted((res, id) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { content: 'not an array', structuredContent: 'not an object' } }));
      }),
    );
    const r = await runtime().run(agent(url), {}, context());
    expect(r).toMatchObject({ kind: 'failure', code: 'agent_error' });
  });
});

describe('mcp runtime: resumable streams', () => {
  it('works with a server that primes its streams with event ids', async () => {
    const s = await startMcpServer({ run: echo }, { resumable: true });
    const rt = runtime();
    for (let i = 0; i < 3; i++) expect(await rt.run(agent(s.url), { i }, context())).toEqual({ kind: 'output', output: { echo: { i } } });
    expect(s.initializes).toBe(1);
  });

  it('lets the SDK resume a stream the server closed on purpose after an event id (polling)', async () => {
    const s = await startMcpServer(
      {
        slow: async (args, extra) => {
          extra.closeSSEStream?.(); // the answer then comes through GET + Last-Event-ID
          await new Promise((resolve) => setTimeout(resolve, 100));
          return structured({ late: args });
        },
      },
      { resumable: true },
    );
    const signal = AbortSignal.timeout(30_000);
    const r = await runtime().run(agent(s.url, 'slow'), { n: 1 }, context({ signal, timeoutMs: 30_000 }));
    expect(r).toEqual({ kind: 'output', output: { late: { n: 1 } } });
    expect(s.gets.resume).toBeGreaterThanOrEqual(1);
  });
});

describe('mcp runtime: the request', () => {
  it('sends the input as arguments, and holon/max_cost and holon/delegation in _meta only when set', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime();
    const input = { file: 'a.pdf', pages: [1, 2], note: 'ünïcode', nested: { deep: [null, true] } };
    expect(await rt.run(agent(s.url), input, context())).toEqual({ kind: 'output', output: { echo: input } });
    await rt.run(agent(s.url), { n: 1 }, context({ maxCost: { amount: '0.20', currency: 'EUR' } }));
    await rt.run(agent(s.url), { n: 2 }, context({ delegationToken: 'hdt_abc' }));
    await rt.run(agent(s.url), { n: 3 }, context({ maxCost: { amount: '1.5', currency: 'USD' }, delegationToken: 'hdt_xyz' }));
    expect(s.calls.map((c) => c.name)).toEqual(['run', 'run', 'run', 'run']);
    expect(s.calls[0]!.arguments).toEqual(input);
    expect(s.calls[0]!.meta).toBeUndefined();
    expect(s.calls[1]!.meta).toEqual({ 'holon/max_cost': { amount: '0.20', currency: 'EUR' } });
    expect(s.calls[2]!.meta).toEqual({ 'holon/delegation': 'hdt_abc' });
    expect(s.calls[3]!.meta).toEqual({ 'holon/max_cost': { amount: '1.5', currency: 'USD' }, 'holon/delegation': 'hdt_xyz' });
  });

  it('adds the extra headers (Authorization) without letting them replace the transport headers', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime({ headers: (a) => ({ Authorization: `Bearer tok-${a.manifest.name}`, 'Mcp-Session-Id': 'forged', Accept: 'text/plain' }) });
    expect(await rt.run(agent(s.url), { a: 1 }, context())).toEqual({ kind: 'output', output: { echo: { a: 1 } } });
    expect(s.calls[0]!.authorization).toBe('Bearer tok-mcp-agent');
    expect(s.unknownSessions).toBe(0);
  });

  it('is runtime_unavailable when the headers cannot be prepared, the endpoint or tool is missing', async () => {
    const s = await startMcpServer({ run: echo });
    const failing = runtime({ headers: () => Promise.reject(new Error('vault sealed')) });
    expect(await failing.run(agent(s.url), {}, context())).toMatchObject({ code: 'runtime_unavailable', message: expect.stringMatching(/vault sealed/) });
    const rt = runtime();
    const noEndpoint = { ...agent(s.url), manifest: buildManifest({ runtime: { kind: 'mcp', tool: 'run', timeoutS: 60 } }) };
    expect(await rt.run(noEndpoint, {}, context())).toMatchObject({ code: 'runtime_unavailable' });
    const ftp = agent('ftp://127.0.0.1/mcp');
    expect(await rt.run(ftp, {}, context())).toMatchObject({ code: 'runtime_unavailable' });
    const noTool = { ...agent(s.url), manifest: buildManifest({ runtime: { kind: 'mcp', endpoint: s.url, timeoutS: 60 } }) };
    expect(await rt.run(noTool, {}, context())).toMatchObject({ code: 'runtime_unavailable' });
    expect(s.initializes).toBe(0);
  });

  it('is agent_error for an input that cannot be MCP arguments (not an object)', async () => {
    const s = await startMcpServer({ run: echo });
    const rt = runtime();
    for (const input of [[1, 2], 'text', 3, null]) {
      expect(await rt.run(agent(s.url), input, context())).toMatchObject({ kind: 'failure', code: 'agent_error' });
    }
    expect(s.calls).toHaveLength(0);
  });
});
