/** The mandate module (spec/mandate.md): validation, admission, derivation and attenuation. Pure. */
export type { Mandate } from './types.js';
export { matchesAgent, matchesCapability, patternCovers } from './patterns.js';
export { mandateToDoc, mandateWarnings, parseMandate, validateMandate, type MandateValidation } from './validate.js';
export { checkCall } from './check-call.js';
export { checkAttenuation } from './attenuation.js';
export { deriveSubMandate } from './derive.js';
