/**
 * What call_agent's `input` is, told to MCP clients (services/api/mcp/schemas.ts, tools.ts): its input schema declares
 * `input` a JSON object and points at get_agent, so a client that builds arguments from the schema (MCP Inspector's
 * CLI) sends an object, not a string; get_agent answers the agent's own input schema and an example input, in
 * `structuredContent` and in the text a model reads. Driven by the SDK's own client over Streamable HTTP.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, test as base } from 'vitest';
import { AGENT_VIEW, MANDATE_SEARCH } from '../../services/api/openapi/catalogue-schemas.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import type { Schema } from '../support/http.js';

const test = base.extend<{ gateway: TestGateway }>({
  gateway: async ({}, use) => useAudited(await startTestGateway({ config: { mcpMandate: 'alice/test' } }), use),
});

async function withClient<T>(g: TestGateway, use: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'holon-input-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: { 'x-holon-mandate': 'alice/test' } } }));
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

const structured = (r: any) => r.structuredContent as any;
const textOf = (r: any): string => (r.content as Array<{ type: string; text?: string }>)[0]?.text ?? '';

describe("call_agent's input", () => {
  test('tools/list: input is a JSON object whose description points at get_agent; get_agent declares the schema and example it answers', async ({
    gateway: g,
  }) => {
    await g.mandate({});
    await withClient(g, async (c) => {
      const { tools } = await c.listTools();
      const call = tools.find((t) => t.name === 'call_agent')!;
      const input = (call.inputSchema.properties as Record<string, { type?: string; description?: string }>).input!;
      expect(input.type).toBe('object');
      expect(input.description).toMatch(/get_agent/);
      expect(input.description).toMatch(/interface\.input/);
      expect(call.inputSchema.required).toContain('input');
      expect(call.description).toMatch(/get_agent/);

      // get_agent answers what GET /v0/agents/{ns}/{name} answers: the one definition (or the error shape).
      const get = tools.find((t) => t.name === 'get_agent')!;
      const [answer, error] = get.outputSchema!.anyOf as [Record<string, any>, Record<string, any>];
      expect(answer).toEqual(JSON.parse(JSON.stringify(AGENT_VIEW)));
      expect(error.required).toEqual(['error']);
      const props = answer.properties as Record<string, any>;
      expect(props.interface).toMatchObject({ type: 'object', properties: { input: { type: 'object' }, examples: { type: 'array' } } });
      expect(answer.required).toContain('example_input');
      // search_agents answers a search under the connection's mandate, as REST does under `mandate`.
      const search = tools.find((t) => t.name === 'search_agents')!;
      expect((search.outputSchema!.anyOf as unknown[])[0]).toEqual(JSON.parse(JSON.stringify(MANDATE_SEARCH)));
    });
  });

  test("get_agent answers the agent's input schema and an example input; call_agent with that object runs; a string is refused in plain words", async ({
    gateway: g,
  }) => {
    await g.mandate({ allow: { agents: ['examples/echo-upper', 'examples/word-count'], capabilities: [] } });
    await withClient(g, async (c) => {
      const echo = g.gw.context.registry.resolve('examples/echo-upper');
      if (!echo.ok) throw new Error('examples/echo-upper is not listed');
      const manifest = echo.agent.manifest;

      const described = await c.callTool({ name: 'get_agent', arguments: { id: 'examples/echo-upper' } });
      expect(described.isError).toBeFalsy();
      const agent = structured(described);
      expect(agent.interface.input).toEqual(manifest.interface.input);
      expect(agent.interface.examples).toEqual(manifest.interface.examples);
      expect(agent.example_input).toEqual({ text: 'Hello, Holon' });
      // The text a model reads carries them too, inside the untrusted wrapper (the author wrote them).
      const text = textOf(described);
      expect(text).toContain('call_agent\'s "input" is a JSON object matching input_schema');
      const shown = JSON.parse(text.slice(text.indexOf('<untrusted>') + '<untrusted>'.length, text.lastIndexOf('</untrusted>')));
      expect(shown).toMatchObject({ input_schema: manifest.interface.input, example_input: { text: 'Hello, Holon' } });
      // The same view over REST.
      const rest = await g.get('/v0/agents/examples/echo-upper');
      expect(rest.body).toMatchObject({
        interface: { input: manifest.interface.input, examples: manifest.interface.examples },
        example_input: { text: 'Hello, Holon' },
      });

      // The example input, as the object the schema declares: the call runs and is paid.
      const ran = await c.callTool({ name: 'call_agent', arguments: { agent: 'examples/echo-upper', input: agent.example_input } });
      expect(ran.isError, JSON.stringify(ran.structuredContent)).toBeFalsy();
      expect(structured(ran)).toMatchObject({ status: 'succeeded', output: { text: 'HELLO, HOLON' }, receipt: { status: 'succeeded', billed: true } });

      // MCP Inspector's CLI (`--tool-arg input='{"text":"hi"}'`) turns a command-line value into JSON only when the
      // property's schema says `type: object` (or array, number, boolean); otherwise it sends the string as it is
      // (cli/src/client/tools.ts, convertParameterValue). The same rule here, on the schema tools/list answers.
      const { tools } = await c.listTools();
      const properties = tools.find((t) => t.name === 'call_agent')!.inputSchema.properties as Record<string, { type?: string }>;
      const asInspector = (args: Record<string, string>) =>
        Object.fromEntries(Object.entries(args).map(([k, v]) => [k, ['object', 'array'].includes(properties[k]?.type ?? '') ? JSON.parse(v) : v]));
      const inspected = await c.callTool({ name: 'call_agent', arguments: asInspector({ agent: 'examples/echo-upper', input: '{"text": "hi"}' }) });
      expect(inspected.isError, JSON.stringify(inspected.structuredContent)).toBeFalsy();
      expect(structured(inspected)).toMatchObject({ status: 'succeeded', output: { text: 'HI' } });

      // What such a client sent before: the JSON as a string. Refused before admission, nothing charged.
      const asString = await c.callTool({ name: 'call_agent', arguments: { agent: 'examples/echo-upper', input: '{"text": "hi"}' } });
      expect(asString.isError).toBe(true);
      expect(structured(asString).error).toMatchObject({ code: 'invalid_request', problems: [{ path: '$.input', message: expect.stringMatching(/object/) }] });

      // Another agent: its own schema and example.
      const words = structured(await c.callTool({ name: 'get_agent', arguments: { id: 'examples/word-count' } }));
      expect(words.interface.input).toMatchObject({ type: 'object', required: ['text'] });
      expect(words.example_input).toEqual({ text: 'the quick brown fox' });
      const counted = await c.callTool({ name: 'call_agent', arguments: { agent: 'examples/word-count', input: words.example_input } });
      expect(structured(counted)).toMatchObject({ status: 'succeeded', output: { words: 4, characters: 19 } });
    });
    // Two echoes (0.01 each) and four words (0.004): the string input cost nothing.
    expect((await g.get<Schema<'MandateView'>>('/v0/mandates/alice/test')).body.budget).toMatchObject({ spent: '0.024', reserved: '0.00' });
  });
});
