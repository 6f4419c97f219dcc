/**
 * The shape of the code, enforced (`npm run lint`, run by .ci/run): docs/ARCHITECTURE.md explains it.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles anywhere in shared/ and services/, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'services-stay-apart',
      comment: 'A service never imports another: they share shared/ only (the composition root and the CLI excepted).',
      severity: 'error',
      from: { path: '^services/(api|runner|settler|evaluator)/' },
      to: { path: '^services/([^/]+)/', pathNot: ['^services/$1/'] },
    },
    {
      name: 'services-not-from-shared',
      comment: 'shared/ is what every service uses; it never reaches into a service.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^services/' },
    },
    {
      name: 'core-is-pure',
      comment: 'shared/core has no I/O: it imports only itself and a few pure libraries (hashing is the one builtin).',
      severity: 'error',
      from: { path: '^shared/core/' },
      to: {
        pathNot: ['^shared/core/', '^node_modules/(ajv|ajv-formats|re2|semver|yaml)/'],
        dependencyTypesNot: ['type-only', 'core'],
        path: '.',
      },
    },
    {
      name: 'core-builtins',
      comment: 'shared/core may hash (node:crypto) and nothing else from Node: no fs, net, http, timers or process.',
      severity: 'error',
      from: { path: '^shared/core/' },
      to: { dependencyTypes: ['core'], pathNot: ['^crypto$'] },
    },
    {
      name: 'call-phases-meet-in-the-engine',
      comment:
        "The call's phases call each other through the engine (shared/calls/engine.ts), never directly: admission does not import settlement, and the run phase uses no admission code (the types a delegated call is admitted with excepted).",
      severity: 'error',
      from: { path: '^shared/calls/(submit|run)/' },
      to: { path: '^shared/calls/(settle|submit)/', pathNot: ['^shared/calls/$1/'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'one-file-imports-bullmq',
      comment: 'The queue seam: only shared/messaging/bullmq.ts imports bullmq (its in-memory twin and one contract test keep them alike).',
      severity: 'error',
      from: { pathNot: '^shared/messaging/bullmq\\.ts$' },
      to: { path: '(^|/)bullmq(/|$)', pathNot: '^shared/' },
    },
    {
      name: 'one-file-imports-prom-client',
      comment: 'Metrics: only shared/platform/metrics.ts defines them (one registry per gateway, closed label sets).',
      severity: 'error',
      from: { pathNot: '^shared/platform/metrics\\.ts$' },
      to: { path: '(^|/)prom-client(/|$)' },
    },
    {
      name: 'one-file-imports-opentelemetry',
      comment: 'Tracing: only shared/platform/tracing.ts touches OpenTelemetry (bullmq-otel is the queue seam, bullmq.ts).',
      severity: 'error',
      from: { pathNot: '^shared/platform/tracing\\.ts$' },
      to: { path: '(^|/)@opentelemetry/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js', '.mjs', '.mts', '.d.mts'],
    },
    exclude: { path: '^(tests|bench)/' },
  },
};
