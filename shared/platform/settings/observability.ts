/** Logs, the metrics port and traces (docs/operating.md, "Metrics, traces and logs"). */
import { inSection, ROLES, setting } from './declare.js';

export const OBSERVABILITY = inSection('observability', {
  logLevel: setting.string({ env: 'LOG_LEVEL', default: 'info', doc: 'pino level: access logs are `info`, probes and scrapes `debug`', roles: ROLES }),
  /** GET /metrics and GET /healthz on a port of their own (shared/platform/metrics-server.ts). */
  metricsPort: setting.int({
    env: 'HOLON_METRICS_PORT',
    min: 0,
    max: 65535,
    shown: 'off',
    doc: '`GET /metrics` and `/healthz` on a port of their own in any role, no key: for the cluster network only; 0 = any free port',
    roles: ROLES,
  }),
  /** Like HOST: loopback in dev, 0.0.0.0 hosted or in production (parse.ts fills it). */
  metricsHost: setting.string({ env: 'HOLON_METRICS_HOST', default: '', shown: 'like `HOST`', doc: "the metrics port's address", roles: ROLES }),
});

/** Where traces go (OTLP over HTTP, shared/platform/tracing.ts): read into the one `tracesUrl` (parse.ts). */
export const TRACING = inSection('observability', {
  endpoint: setting.endpoint({
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    shown: 'off',
    doc: 'an OTLP/HTTP collector (`http://collector:4318`; `/v1/traces` is appended): tracing on. `OTEL_EXPORTER_OTLP_HEADERS` carries its token',
    roles: ROLES,
  }),
  tracesEndpoint: setting.endpoint({
    env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    shown: 'off',
    doc: 'the traces endpoint as it is; wins over `OTEL_EXPORTER_OTLP_ENDPOINT`',
    roles: ROLES,
  }),
});
