/**
 * Identity rules (spec/manifest.md §2): version, summary, description, capabilities, source.
 * `id`, `license` and the capability syntax are fully expressed by the schema.
 */
import { jsonPath } from '../../errors.js';
import { PATTERN_MESSAGES, VERSION_PATTERN } from '../schema.js';
import { isExactVersion, section, type Report } from './util.js';
import type { JsonObject } from '../../json.js';

const MAX_DESCRIPTION_BYTES = 8 * 1024;

export function checkIdentity(doc: JsonObject, report: Report): void {
  const { version, summary, description, capabilities } = doc;

  if (typeof version === 'string' && !isExactVersion(version)) {
    report('$.version', PATTERN_MESSAGES[VERSION_PATTERN]!);
  }
  // `version: 1.0` in YAML is the number 1: say what to write, not just "must be string".
  if (typeof version === 'number') {
    report('$.version', `must be a semver string like 1.0.0, not the number ${version} (quote it in YAML: version: "1.0.0")`);
  }

  if (typeof summary === 'string') {
    if (/[\r\n\u2028\u2029]/.test(summary)) report('$.summary', 'must be one line (no line breaks)');
    else if (summary.trim() === '') report('$.summary', 'must not be empty');
  }

  if (typeof description === 'string') {
    const bytes = Buffer.byteLength(description, 'utf8');
    if (bytes > MAX_DESCRIPTION_BYTES) {
      report('$.description', `is ${bytes} bytes long; at most 8 KB (${MAX_DESCRIPTION_BYTES} bytes) are allowed`);
    }
  }

  if (Array.isArray(capabilities)) {
    const seen = new Set<string>();
    capabilities.forEach((c, i) => {
      if (typeof c !== 'string') return;
      if (seen.has(c)) report(jsonPath('capabilities', i), `"${c}" is listed twice`);
      seen.add(c);
    });
  }

  const repository = section(doc, 'source')?.repository;
  if (typeof repository === 'string') {
    const repo = repository.split('/')[4];
    if (repo === '.' || repo === '..') report('$.source.repository', 'must name a GitHub repository');
  }
}
