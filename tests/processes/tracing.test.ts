/**
 * Tracing (shared/platform/tracing.ts): with OTEL_EXPORTER_OTLP_ENDPOINT set, an API, a runner and a settler, each
 * its own OS process on Postgres and Redis (BullMQ with bullmq-otel), export spans over OTLP/HTTP (JSON) to a fake
 * collector on loopback. One paid call is one trace: the API's POST /v0/calls, the runner's holon.run and the
 * settler's holon.settle share its trace id, each from its own service.name. No attribute holds the input, the
 * mandate id or a key. Without the variable nothing is exported (the other tests: no collector, no error).
 */
import { createServer, type Server } from 'node:http';
import { describe, expect, test } from 'vitest';
import { startTestCluster } from '../support/gateway.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: OtlpAttribute[];
}
interface OtlpExport {
  resourceSpans: Array<{ resource: { attributes: OtlpAttribute[] }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
}

interface Collected extends OtlpSpan {
  service: string;
}

/** An OTLP/HTTP traces endpoint that keeps every span it is sent (exporter-trace-otlp-http 0.57 posts JSON). */
async function fakeCollector(): Promise<{ url: string; spans: Collected[]; contentTypes: Set<string>; close(): Promise<void> }> {
  const spans: Collected[] = [];
  const contentTypes = new Set<string>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.add(String(req.headers['content-type']));
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
        for (const rs of body.resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ ...span, service });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, spans, contentTypes, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const flat = (v: OtlpValue): string[] =>
  v.arrayValue ? (v.arrayValue.values ?? []).flatMap(flat) : [String(v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue)];
const attr = (s: OtlpSpan, key: string) => s.attributes?.find((a) => a.key === key)?.value.stringValue;

describe('tracing across API → queue → runner → settler', () => {
  test('one paid call is one trace over three processes; no attribute holds the input, the mandate id or a key', async () => {
    const collector = await fakeCollector();
    const { cluster, stop } = await startTestCluster({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, HOLON_FILE_SECRET: 'file-secret-for-the-tracing-test-0123456789' },
    });
    const marker = 'an-input-that-must-never-be-traced';
    try {
      await cluster.start('settler');
      await cluster.start('runner');
      const api = await cluster.start('api');
      const post = (path: string, body: unknown) =>
        fetch(api.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const mandate = await post('/v0/mandates', {
        id: 'alice/traced',
        issuer: 'alice',
        grantee: 'alice/assistant',
        allow: { agents: ['examples/*'], capabilities: ['text.*'] },
        budget: { total: '5.00', currency: 'EUR' },
      });
      expect(mandate.status).toBe(201);
      const r = await post('/v0/calls', { mandate: 'alice/traced', agent: 'examples/echo-upper', input: { text: marker } });
      const answer = (await r.json()) as { receipt: { id: string; billed: boolean } };
      expect(r.status).toBe(200);
      expect(answer.receipt.billed).toBe(true);
      const callId = answer.receipt.id;
      // An MCP call_agent whose request carries the caller's trace context (`_meta.traceparent`) joins that trace.
      const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
      const mcp = await fetch(`${api.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-holon-mandate': 'alice/traced',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'call_agent',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'call_agent',
            arguments: { agent: 'examples/echo-upper', input: { text: marker } },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {},
              traceparent: `00-${callerTrace}-00f067aa0ba902b7-01`,
            },
          },
        }),
      });
      const text = await mcp.text();
      const mcpCall = JSON.parse(text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? 'null')) ?? {};
      const mcpCallId = (mcpCall.result?.structuredContent?.receipt?.id ?? '') as string;
      expect(mcpCallId).not.toBe('');
      // SIGTERM: each process exports what its batch processor still holds before it exits.
      await cluster.stopAll(15_000);
      for (const p of cluster.processes) expect(p.exited(), p.name).toEqual({ code: 0, signal: null });

      expect([...collector.contentTypes]).toEqual(['application/json']);
      const ofCall = (name: string) => collector.spans.filter((s) => s.name === name && attr(s, 'holon.call_id') === callId);
      const [request] = ofCall('POST /v0/calls');
      const [run] = ofCall('holon.run');
      const [settle] = ofCall('holon.settle');
      expect(request?.service).toBe('holon-api');
      expect(run?.service).toBe('holon-runner');
      expect(settle?.service).toBe('holon-settler');
      expect(run!.traceId).toBe(request!.traceId);
      expect(settle!.traceId).toBe(request!.traceId);
      expect(attr(run!, 'holon.agent_id')).toBe('examples/echo-upper');
      expect(attr(run!, 'holon.outcome')).toBe('success');
      expect(attr(settle!, 'holon.settle_result')).toBe('settled');
      // The queues' spans join them: the run queue's consumer span is the parent of holon.run.
      const trace = collector.spans.filter((s) => s.traceId === request!.traceId);
      const byId = new Map(trace.map((s) => [s.spanId, s]));
      expect(byId.get(run!.parentSpanId!)?.name).toBe('process run');
      expect(byId.get(settle!.parentSpanId!)?.name).toBe('process settle');

      const [tool] = collector.spans.filter((s) => s.name === 'MCP call_agent' && attr(s, 'holon.call_id') === mcpCallId);
      expect(tool?.traceId).toBe(callerTrace);
      expect(tool?.parentSpanId).toBe('00f067aa0ba902b7');
      const mcpRun = collector.spans.find((s) => s.name === 'holon.run' && attr(s, 'holon.call_id') === mcpCallId);
      expect(mcpRun?.traceId).toBe(callerTrace);

      const values = collector.spans.flatMap((s) => (s.attributes ?? []).flatMap((a) => flat(a.value)));
      expect(values.length).toBeGreaterThan(10);
      for (const secret of [marker, 'alice/traced', 'file-secret-for-the-tracing-test'])
        expect(
          values.filter((v) => v.includes(secret)),
          secret,
        ).toEqual([]);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${cluster.describe()}`, { cause: e });
    } finally {
      await cluster.stopAll();
      await collector.close();
      await stop();
    }
  });
});
