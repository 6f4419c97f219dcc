/**
 * Reading YAML or JSON documents (manifests, mandates) into plain JSON values, with plain-words problems.
 */
import { parseDocument } from 'yaml';
import type { Problem } from './errors.js';

/** Largest document accepted: manifests carry two schemas of at most 64 KB each, plus text. */
export const MAX_DOCUMENT_BYTES = 512 * 1024;

export type DocumentResult = { ok: true; value: unknown } | { ok: false; problems: Problem[] };

/**
 * Parse `text` as JSON when it looks like JSON (or `format` says so), else as YAML.
 * YAML is read in its JSON-compatible core: no custom tags, no merge keys, dates stay strings,
 * and aliases are bounded so a "billion laughs" document cannot blow up memory.
 */
export function parseDocumentText(text: string, format?: 'json' | 'yaml'): DocumentResult {
  if (Buffer.byteLength(text, 'utf8') > MAX_DOCUMENT_BYTES) {
    return { ok: false, problems: [{ path: '$', message: `the document is larger than ${MAX_DOCUMENT_BYTES / 1024} KB` }] };
  }
  if (text.includes('\u0000')) {
    return { ok: false, problems: [{ path: '$', message: 'the document contains a NUL character' }] };
  }
  const asJson = format === 'json' || (format === undefined && /^\s*[{[]/.test(text));
  if (asJson) {
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch (e) {
      if (format === 'json') return { ok: false, problems: [{ path: '$', message: `not valid JSON: ${(e as Error).message}` }] };
      // fall through: YAML flow style is a superset of JSON and reports positions better
    }
  }
  const doc = parseDocument(text, { schema: 'core', merge: false, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length) {
    return {
      ok: false,
      problems: doc.errors.map((e) => ({ path: '$', message: `not valid YAML (line ${e.linePos?.[0]?.line ?? '?'}): ${e.message.split('\n')[0]}` })),
    };
  }
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) };
  } catch (e) {
    return { ok: false, problems: [{ path: '$', message: `not a usable document: ${(e as Error).message}` }] };
  }
}

/**
 * A document as the JSON it stands for: what is validated is exactly what gets stored, and cycles or BigInts are
 * refused here (one problem at `$`).
 */
export function jsonCopy(doc: unknown): DocumentResult {
  try {
    const text = JSON.stringify(doc);
    return { ok: true, value: text === undefined ? undefined : JSON.parse(text) };
  } catch (e) {
    return { ok: false, problems: [{ path: '$', message: `is not a JSON document: ${(e as Error).message}` }] };
  }
}
