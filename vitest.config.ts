import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: integration tests each take their own database, so files may run in parallel.
    maxWorkers: 2,
    projects: [
      // The pure core and whatever needs neither Postgres nor Redis: `npm run test:unit`, in seconds.
      { extends: true, test: { name: 'unit', include: ['tests/unit/**/*.test.ts'] } },
      // Real Postgres and Redis (tests/support/global-setup.ts finds or starts them), the gateway in the test's own process.
      { extends: true, test: { name: 'integration', include: ['tests/integration/**/*.test.ts'], globalSetup: ['tests/support/global-setup.ts'] } },
      // What starts other processes: services as processes, the CLI, child workers and agent hosts, Chromium (`npm run test:processes`).
      { extends: true, test: { name: 'processes', include: ['tests/processes/**/*.test.ts'], globalSetup: ['tests/support/global-setup.ts'] } },
      // Bounded chaos: services as processes killed at random under mixed traffic (`npm run test:chaos`, run by CI).
      { extends: true, test: { name: 'chaos', include: ['tests/chaos/**/*.test.ts'], globalSetup: ['tests/support/global-setup.ts'], testTimeout: 600_000 } },
    ],
  },
});
