/**
 * The named schemas of the document (`components.schemas`): wherever a route uses one of these very objects, the
 * document says `$ref` (document.ts). The shapes live with their concern: schemas.ts (errors, receipts, mandates,
 * approvals, keys), call-schemas.ts (call answers), catalogue-schemas.ts (agents, records, evaluations).
 */
import { manifestSchema } from '../../../shared/core/manifest/index.js';
import { CALL_FAILED, CALL_HELD, CALL_QUEUED, CALL_STATE, CALL_SUCCEEDED } from './call-schemas.js';
import {
  AGENT_CARD,
  AGENT_RECORD,
  AGENT_VIEW,
  CATALOG_PAGE,
  DATA_POLICY,
  MANDATE_SEARCH,
  PRICING,
  RECORD_SUMMARY,
  RUNTIME,
  SEARCH_RESULT,
  WINDOW_RECORD,
} from './catalogue-schemas.js';
import { EVALUATION_SUITE, EVALUATION_SUMMARY } from './evaluation-schemas.js';
import type { JsonSchema } from './operations.js';
import { APPROVAL, BALANCE, ERROR, KEY_SET, KEY_VIEW, MANDATE_DOCUMENT, MANDATE_VIEW, MINTED_KEY, PROBLEM, RECEIPT } from './schemas.js';

export const COMPONENTS: Readonly<Record<string, JsonSchema>> = {
  Error: ERROR,
  Problem: PROBLEM,
  Receipt: RECEIPT,
  MandateView: MANDATE_VIEW,
  MandateDocument: MANDATE_DOCUMENT,
  Approval: APPROVAL,
  CallSucceeded: CALL_SUCCEEDED,
  CallFailed: CALL_FAILED,
  CallHeld: CALL_HELD,
  CallQueued: CALL_QUEUED,
  CallState: CALL_STATE,
  Balance: BALANCE,
  MintedKey: MINTED_KEY,
  KeyView: KEY_VIEW,
  KeySet: KEY_SET,
  AgentCard: AGENT_CARD,
  AgentView: AGENT_VIEW,
  SearchResult: SEARCH_RESULT,
  MandateSearch: MANDATE_SEARCH,
  CatalogPage: CATALOG_PAGE,
  AgentRecord: AGENT_RECORD,
  WindowRecord: WINDOW_RECORD,
  RecordSummary: RECORD_SUMMARY,
  Evaluation: EVALUATION_SUMMARY,
  EvaluationSuite: EVALUATION_SUITE,
  Pricing: PRICING,
  DataPolicy: DATA_POLICY,
  Runtime: RUNTIME,
  Manifest: manifestSchema,
};
