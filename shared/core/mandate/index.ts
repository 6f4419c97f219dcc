/** The mandate module (spec/mandate.md): validation, admission, derivation and attenuation. Pure. */
export type {
  Admission,
  AgentFacts,
  CallRequest,
  DataRequirement,
  Decision,
  LicenseRequirement,
  Mandate,
} from './types.js';
export {
  agentPatternProblem,
  capabilityPatternProblem,
  coveringPattern,
  isAgentId,
  isHandle,
  matchesAgent,
  matchesCapability,
  parseAgentPattern,
  parseCapabilityPattern,
  patternCovers,
  CAPABILITY_CLASS,
  HANDLE,
  MAX_PATTERN_LENGTH,
  type AgentPattern,
  type CapabilityPattern,
} from './patterns.js';
export {
  mandateIdDepth,
  mandateToDoc,
  mandateWarnings,
  normalizeRate,
  parseMandate,
  parseRetention,
  validateMandate,
  MAX_DELEGATION_DEPTH,
  MAX_PATTERNS,
  RECEIPT_ID,
  type MandateValidation,
  type ValidateOptions,
} from './validate.js';
export { checkCall, MIN_RUNS_FOR_SUCCESS_RATE } from './check-call.js';
export { checkAttenuation } from './attenuation.js';
export { deriveSubMandate, type Derivation } from './derive.js';
