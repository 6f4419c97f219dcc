/**
 * Every documented route: each route file's operations (its route table), in one list. A new route file adds its
 * operations here; tests/integration/openapi.test.ts fails on any /v0 route of the app that is not in the document,
 * and on any documented route the app does not serve.
 */
import { topupOperations } from '../routes/topups.js';
import { payoutOperations } from '../routes/payouts.js';
import { accountOperations } from '../routes/accounts.js';
import { adminOperations } from '../routes/admin.js';
import { agentOperations } from '../routes/agents.js';
import { approvalOperations } from '../routes/approvals.js';
import { authOperations } from '../routes/auth.js';
import { oauthOperations } from '../routes/oauth.js';
import { consentOperations } from '../routes/mcp-consent.js';
import { callOperations } from '../routes/calls/routes.js';
import { eventOperations } from '../routes/calls/events.js';
import { catalogOperations } from '../routes/catalog.js';
import { credentialOperations } from '../routes/credentials.js';
import { deliveryOperations } from '../routes/deliveries.js';
import { demoOperations } from '../routes/demo.js';
import { draftOperations } from '../routes/drafts.js';
import { fileOperations } from '../routes/files.js';
import { jwksOperations } from '../routes/jwks.js';
import { keyOperations } from '../routes/keys.js';
import { logOperations } from '../routes/log.js';
import { mandateOperations } from '../routes/mandates.js';
import { meAgentOperations } from '../routes/me-agents.js';
import { publishingOperations } from '../routes/publishing.js';
import { receiptOperations } from '../routes/receipts.js';
import { statementOperations } from '../routes/statement.js';
import { webhookOperations } from '../routes/webhooks.js';
import { defineOperations, type Operation } from './operations.js';
import { object } from './schemas.js';

export const metaOperations = defineOperations({
  openapi: {
    id: 'readOpenApi',
    method: 'get',
    path: '/v0/openapi.json',
    tag: 'meta',
    auth: ['none'],
    summary: 'This document: OpenAPI 3.1, generated from the schemas the routes validate with',
    responses: {
      200: {
        description: 'The OpenAPI document',
        // Open: the rest of the document is OpenAPI's, described by its own specification.
        schema: { ...object('An OpenAPI 3.1 document', { openapi: { const: '3.1.0' } }, ['openapi', 'paths']), additionalProperties: true },
      },
    },
  },
  health: {
    id: 'health',
    method: 'get',
    path: '/healthz',
    tag: 'meta',
    auth: ['none'],
    summary: 'Liveness',
    responses: { 200: { description: 'Up', schema: object('Up', { ok: { const: true } }, ['ok']) } },
  },
});

export const ROUTE_OPERATIONS: readonly Operation[] = [
  metaOperations,
  jwksOperations,
  callOperations,
  eventOperations,
  approvalOperations,
  mandateOperations,
  receiptOperations,
  logOperations,
  statementOperations,
  accountOperations,
  keyOperations,
  authOperations,
  oauthOperations,
  consentOperations,
  draftOperations,
  publishingOperations,
  credentialOperations,
  agentOperations,
  catalogOperations,
  meAgentOperations,
  topupOperations,
  payoutOperations,
  fileOperations,
  adminOperations,
  demoOperations,
  deliveryOperations,
  webhookOperations,
].flatMap((ops) => Object.values<Operation>(ops));
