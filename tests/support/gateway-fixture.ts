/**
 * `gatewayTest`: vitest's `test` with a `gateway` fixture, a gateway started by startTestGateway() (gateway.ts) for
 * each test; the ledger audit must pass after it. Apart from gateway.ts because vitest's `test.extend` cannot run
 * outside vitest, and gateway.ts is used by scripts too.
 */
import { test as base } from 'vitest';
import { startTestGateway, useAudited, type TestGateway } from './gateway.js';

/** `test` with a running gateway; the ledger audit must pass after each test. */
export const gatewayTest = base.extend<{ gateway: TestGateway }>({
  // eslint-disable-next-line no-empty-pattern
  gateway: async ({}, use) => useAudited(await startTestGateway(), use),
});
