/**
 * Manifest files parsed and validated once per process. A process may load the same directories many times (every
 * gateway a test process starts loads the dev registry), and validating a manifest is the costly part of a load: the
 * outcome is kept by the file's absolute path and exact text, so a file whose bytes change is parsed and validated
 * again. What a caller gets is its own copy: the manifests of two loads never share an object.
 */
import { resolve } from 'node:path';
import { parseDocumentText, type DocumentResult } from '../core/documents.js';
import { validateManifest, type ManifestResult } from '../core/manifest/index.js';

/** How many files a process keeps (least recently used dropped first). */
const MAX_FILES = 1024;

interface Kept {
  text: string;
  doc: DocumentResult;
  /** Set the first time the document is validated. */
  result?: ManifestResult;
}

const kept = new Map<string, Kept>();

export interface ManifestFile {
  /** The document as parsed (JSON for a `.json` file, else YAML); read it, never change it. */
  doc: DocumentResult;
  /** validateManifest(doc) (no upstream lookup): a new copy each time, computed only the first time. */
  validated(): ManifestResult;
}

/** The manifest file at `file` whose content is `text`. */
export function manifestFile(file: string, text: string): ManifestFile {
  const key = resolve(file);
  let entry = kept.get(key);
  if (entry?.text !== text) entry = { text, doc: parseDocumentText(text, file.endsWith('.json') ? 'json' : 'yaml') };
  kept.delete(key); // (re-)inserted last: most recently used
  kept.set(key, entry);
  while (kept.size > MAX_FILES) kept.delete(kept.keys().next().value!);
  const { doc } = entry;
  return {
    doc,
    validated: () => {
      entry.result ??= validateManifest(doc.ok ? doc.value : undefined);
      return structuredClone(entry.result);
    },
  };
}
