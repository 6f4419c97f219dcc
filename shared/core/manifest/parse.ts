/**
 * parseManifest: a holon.yaml (or JSON) text → the same result as validateManifest.
 */
import { parseDocumentText } from '../documents.js';
import { validateManifest, type ManifestResult, type ValidateManifestOptions } from './validate.js';

export function parseManifest(text: string, format?: 'json' | 'yaml', options: ValidateManifestOptions = {}): ManifestResult {
  const parsed = parseDocumentText(text, format);
  if (!parsed.ok) return { ok: false, problems: parsed.problems };
  return validateManifest(parsed.value, options);
}
