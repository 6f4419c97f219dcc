/**
 * The manifest module (spec/manifest.md): schema, validation, parsing, call-time interface checks.
 */
export type {
  CallSlot,
  ChargeOn,
  DataPolicy,
  DeclaredError,
  Downstream,
  DownstreamMode,
  Manifest,
  Pricing,
  PricingModel,
  Retention,
  RuntimeKind,
} from './types.js';
export { RESERVED_ERROR_CODES, isOpenSource } from './types.js';
export { manifestSchema } from './schema.js';
export {
  validateManifest,
  sortProblems,
  type ManifestResult,
  type ValidateManifestOptions,
  type ResolveUpstream,
  type UpstreamInfo,
} from './validate.js';
export { parseManifest } from './parse.js';
export { compileInterface, type InterfaceValidator } from './interface-validator.js';
export { MAX_LINEAGE_LEVELS } from './rules/lineage.js';
export { MAX_SCHEMA_BYTES } from './rules/author-schema.js';
export { parseAgentRef } from '../identifiers.js';
