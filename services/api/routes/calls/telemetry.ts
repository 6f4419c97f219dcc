/**
 * POST /v0/calls measured and traced (docs/operating.md, "Metrics, traces and logs"): the request-to-response time in
 * `holon_call_request_duration_seconds` by outcome class, surface `rest` (MCP's call_agent is the `mcp` surface of the
 * same histogram: services/api/mcp/call-agent.ts), and, when tracing is on, the request's server span, active
 * for the whole submit → admission → reserve → enqueue, so the run and settle queues continue its trace. The span
 * carries the status and the call id, nothing the caller sent.
 */
import type { RequestHandler } from 'express';
import { callOutcomeClass, type GatewayMetrics } from '../../../../shared/platform/metrics.js';
import { requestSpan } from '../../../../shared/platform/tracing.js';
import { afterResponse } from '../../access-log.js';

export function callTelemetry(metrics: GatewayMetrics | undefined): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'POST' || req.path !== '/v0/calls') {
      next();
      return;
    }
    const started = performance.now();
    const span = requestSpan('POST /v0/calls', { 'http.request.method': 'POST', 'http.route': '/v0/calls' });
    afterResponse(res, () => {
      metrics?.callRequestSeconds.observe({ surface: 'rest', outcome: callOutcomeClass(res.statusCode) }, (performance.now() - started) / 1000);
      const callId = res.locals.callId as string | undefined;
      span.end({ 'http.response.status_code': res.statusCode, ...(callId ? { 'holon.call_id': callId } : {}) }, res.statusCode >= 500);
    });
    span.run(next);
  };
}
