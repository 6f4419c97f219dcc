/**
 * `node --import tsx scripts/mcp-conformance.ts`: installs the official MCP conformance suite and the Node 22 it needs
 * into their cache directory (tests/support/mcp-conformance.ts: pinned versions, nothing done when they are there), and
 * prints how to run it by hand against a gateway. .ci/run calls it before the tests, so that
 * tests/processes/mcp-conformance.test.ts does not pay the install inside its timeout.
 */
const { ensureConformanceSuite, SUITE_VERSION } = await import('../tests/support/mcp-conformance.js');

const suite = await ensureConformanceSuite();
process.stdout.write(
  `@modelcontextprotocol/conformance@${SUITE_VERSION} is ready. Against a gateway (holon serve --port 8080):\n` +
    `  ${suite.node} ${suite.cli} server --url http://127.0.0.1:8080/mcp --requirements 2025-11-25\n` +
    `  ${suite.node} ${suite.cli} server --url http://127.0.0.1:8080/mcp --requirements 2026-07-28\n` +
    `  ${suite.node} ${suite.cli} server --url http://127.0.0.1:8080/mcp --spec-version 2026-07-28 --force --scenario <scenario>\n`,
);
