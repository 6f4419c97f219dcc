/**
 * MCP's call_agent in the call-latency histogram (holon_call_request_duration_seconds; services/api/mcp/call-agent.ts,
 * services/api/routes/calls/telemetry.ts, docs/operating.md "Metrics"): `surface` tells `mcp` from REST's `rest`, and the
 * outcome is the class REST's answer to the same call has — succeeded, refused (a denial, arguments it cannot take),
 * pending (held for approval). Driven by the SDK's own client over Streamable HTTP, read back from GET /metrics.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect, test } from 'vitest';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { parsePrometheus, sampleValue } from '../support/prometheus.js';

const HISTOGRAM = 'holon_call_request_duration_seconds_count';

test('call_agent moves the call-latency histogram under surface mcp, by outcome; POST /v0/calls under rest', async () => {
  await useAudited(await startTestGateway({ config: { mcpMandate: 'alice/test' } }), async (g) => {
    await g.mandate({});
    await g.mandate({ id: 'alice/narrow', allow: { agents: ['fixtures/*'], capabilities: ['test.*'] } });
    await g.mandate({ id: 'alice/ask', approval: { above: '0.005' } });
    const call = async (mandate: string, args: Record<string, unknown>) => {
      const client = new Client({ name: 'holon-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: { 'x-holon-mandate': mandate } } }));
      try {
        return await client.callTool({ name: 'call_agent', arguments: args });
      } finally {
        await client.close();
      }
    };
    const ran = await call('alice/test', { agent: 'examples/echo-upper', input: { text: 'mcp' } });
    expect(ran.structuredContent).toMatchObject({ status: 'succeeded', output: { text: 'MCP' } });
    const denied = await call('alice/narrow', { agent: 'examples/echo-upper', input: { text: 'no' } });
    expect(denied.isError).toBe(true);
    const both = await call('alice/test', { agent: 'examples/echo-upper', capability: 'text.transform', input: { text: 'x' } });
    expect(both.isError).toBe(true);
    const held = await call('alice/ask', { agent: 'examples/echo-upper', input: { text: 'ask' } });
    expect(held.structuredContent).toMatchObject({ status: 'pending_approval' });
    expect((await g.post('/v0/calls', { mandate: 'alice/test', agent: 'examples/echo-upper', input: { text: 'rest' } })).status).toBe(200);

    const r = await fetch(`${g.url}/metrics`);
    const m = parsePrometheus(await r.text());
    expect(sampleValue(m, HISTOGRAM, { surface: 'mcp', outcome: 'succeeded' })).toBe(1);
    expect(sampleValue(m, HISTOGRAM, { surface: 'mcp', outcome: 'refused' })).toBe(2);
    expect(sampleValue(m, HISTOGRAM, { surface: 'mcp', outcome: 'pending' })).toBe(1);
    expect(sampleValue(m, HISTOGRAM, { surface: 'mcp' })).toBe(4);
    expect(sampleValue(m, HISTOGRAM, { surface: 'rest', outcome: 'succeeded' })).toBe(1);
    expect(sampleValue(m, HISTOGRAM, { surface: 'rest' })).toBe(1);
    expect(sampleValue(m, 'holon_call_request_duration_seconds_bucket', { surface: 'mcp', outcome: 'succeeded', le: '+Inf' })).toBe(1);
  });
});
