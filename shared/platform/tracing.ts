/**
 * OpenTelemetry tracing (docs/operating.md, "Metrics, traces and logs"). Only when an OTLP endpoint is configured
 * (Config.tracesUrl) does `startTracing` register a NodeTracerProvider: a BatchSpanProcessor, the OTLP/HTTP exporter
 * (JSON), `service.name` = holon-<role>, W3C trace context. Otherwise nothing is registered and every span below is
 * @opentelemetry/api's no-op.
 *
 * A call is one trace: the API's `POST /v0/calls` span (submit → admission → reserve → enqueue), the run queue's
 * producer and consumer spans (bullmq-otel, shared/messaging/bullmq.ts), `holon.run` in the runner, the settle queue's,
 * then `holon.settle` in the settler. Attributes name the call id, the agent id, the runtime kind and outcomes: never
 * an input, an output, a key or a mandate id.
 */
import { createRequire } from 'node:module';
import { context, INVALID_SPAN_CONTEXT, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as Resources from '@opentelemetry/resources';
import type * as TraceBase from '@opentelemetry/sdk-trace-base';
import type * as TraceNode from '@opentelemetry/sdk-trace-node';
import type * as SemanticConventions from '@opentelemetry/semantic-conventions';
import type { Logger } from './log.js';

/**
 * The OpenTelemetry SDK (the provider, the exporter, their protobuf and HTTP code), loaded when tracing starts and
 * only then: a process without an OTLP endpoint runs on @opentelemetry/api's no-ops and never pays for loading it.
 * Synchronously (they are CommonJS packages), so that `startTracing` registers the provider before it returns.
 */
const load = createRequire(import.meta.url);
function sdk() {
  return {
    OTLPTraceExporter: (load('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp).OTLPTraceExporter,
    Resource: (load('@opentelemetry/resources') as typeof Resources).Resource,
    BatchSpanProcessor: (load('@opentelemetry/sdk-trace-base') as typeof TraceBase).BatchSpanProcessor,
    NodeTracerProvider: (load('@opentelemetry/sdk-trace-node') as typeof TraceNode).NodeTracerProvider,
    ATTR_SERVICE_NAME: (load('@opentelemetry/semantic-conventions') as typeof SemanticConventions).ATTR_SERVICE_NAME,
  };
}

export interface Tracing {
  readonly enabled: boolean;
  /** Exports what is buffered and unregisters the provider (the last step of a stop). */
  shutdown(): Promise<void>;
}

/** The provider of this process: tracing is global in OpenTelemetry, so one gateway per process registers it. */
let registered: TraceNode.NodeTracerProvider | undefined;

const OFF: Tracing = { enabled: false, shutdown: async () => {} };

export function startTracing(tracesUrl: string | undefined, service: string, log: Logger): Tracing {
  if (!tracesUrl) return OFF;
  if (registered) {
    log.warn({ service }, 'tracing is already started in this process: its spans go to the first exporter');
    return { enabled: true, shutdown: async () => {} };
  }
  const { OTLPTraceExporter, Resource, BatchSpanProcessor, NodeTracerProvider, ATTR_SERVICE_NAME } = sdk();
  const provider = new NodeTracerProvider({
    resource: new Resource({ [ATTR_SERVICE_NAME]: service }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl }))],
  });
  provider.register();
  registered = provider;
  log.info({ service }, 'tracing: spans are exported over OTLP/HTTP');
  return {
    enabled: true,
    shutdown: async () => {
      try {
        await provider.shutdown();
      } catch (e) {
        log.warn({ err: { message: (e as Error)?.message } }, 'tracing: the last spans could not be exported');
      } finally {
        trace.disable();
        context.disable();
        propagation.disable();
        registered = undefined;
      }
    },
  };
}

const tracer = () => trace.getTracer('holon');
const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Runs `fn` inside a span that is active for everything it awaits (queue adds among them); the span ends when `fn`
 * settles. A failure marks the span with the error's name only (a message may quote what a caller sent).
 */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  if (!registered) return fn(NO_SPAN);
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (e) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error)?.name ?? 'Error' });
      throw e;
    } finally {
      span.end();
    }
  });
}

/** A caller's W3C trace context (`traceparent`, `tracestate`), as MCP carries it in a request's `_meta`. */
export interface TraceCarrier {
  traceparent?: unknown;
  tracestate?: unknown;
}

/** `inSpan`, in the trace the caller's context names (when it names one validly): the call joins the caller's trace. */
export function inSpanOf<T>(carrier: TraceCarrier | undefined, name: string, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  if (!registered) return fn(NO_SPAN);
  const headers: Record<string, string> = {};
  if (typeof carrier?.traceparent === 'string') headers.traceparent = carrier.traceparent;
  if (typeof carrier?.tracestate === 'string') headers.tracestate = carrier.tracestate;
  return context.with(propagation.extract(context.active(), headers), () => inSpan(name, attributes, fn));
}

/** Adds attributes to the active span, if any (the runner learns the agent and the outcome as it goes). */
export function addSpanAttributes(attributes: Attributes): void {
  if (registered) trace.getActiveSpan()?.setAttributes(attributes);
}

/**
 * A server span for one HTTP request: `run` calls the rest of the request's handling inside it, `end` closes it with
 * what the response says. Without tracing, `run` just runs.
 */
export function requestSpan(name: string, attributes: Attributes): { run(next: () => void): void; end(attributes: Attributes, failed: boolean): void } {
  if (!registered) return { run: (next) => next(), end: () => {} };
  const span = tracer().startSpan(name, { kind: SpanKind.SERVER, attributes });
  let ended = false;
  return {
    run: (next) => context.with(trace.setSpan(context.active(), span), next),
    end: (more, failed) => {
      if (ended) return;
      ended = true;
      span.setAttributes(more);
      if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
  };
}
