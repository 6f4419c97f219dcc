/**
 * The manifest module (spec/manifest.md): schema, validation, parsing, call-time interface checks.
 */
export type { Manifest } from './types.js';
export { RESERVED_ERROR_CODES } from './types.js';
export { manifestSchema } from './schema.js';
export { validateManifest, sortProblems, type ManifestResult, type ValidateManifestOptions, type UpstreamInfo } from './validate.js';
export { parseManifest } from './parse.js';
export { compileInterface } from './interface-validator.js';
