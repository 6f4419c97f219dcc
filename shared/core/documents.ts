/**
 * Reading YAML or JSON documents (manifests, mandates) into plain JSON values, with plain-words problems.
 */
import { LineCounter, parseDocument } from 'yaml';
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
      if (format === 'json') return { ok: false, problems: [{ path: '$', message: jsonProblem(text, e) }] };
      // fall through: YAML flow style is a superset of JSON and reports positions better
    }
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { schema: 'core', merge: false, uniqueKeys: true, prettyErrors: false, lineCounter: lines });
  if (doc.errors.length) {
    return {
      ok: false,
      problems: doc.errors.map((e) => {
        const at = e.linePos?.[0] ?? lines.linePos(e.pos[0]);
        return { path: '$', message: `not valid YAML (line ${at.line}, column ${at.col}): ${e.message.split('\n')[0]}` };
      }),
    };
  }
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) };
  } catch (e) {
    return { ok: false, problems: [{ path: '$', message: `not a usable document: ${(e as Error).message}` }] };
  }
}

/**
 * A JSON syntax error with its line and column: where JSON.parse says (older engines: "at position N"), else where the
 * YAML reader, which reads JSON too, stops. JSON.parse's reason without the copy of the text newer engines add.
 */
function jsonProblem(text: string, e: unknown): string {
  const raw = (e as Error).message;
  const reason = raw.replace(/, "[\s\S]*" is not valid JSON$/, '').split('\n')[0];
  const lines = new LineCounter();
  const m = /at position (\d+)/.exec(raw);
  let at: { line: number; col: number } | undefined;
  if (m) {
    lines.addNewLine(0);
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines.addNewLine(i + 1);
    at = lines.linePos(Number(m[1]));
  } else {
    const doc = parseDocument(text, { prettyErrors: false, lineCounter: lines });
    const first = doc.errors[0];
    if (first) at = lines.linePos(first.pos[0]);
  }
  return `not valid JSON${at ? ` (line ${at.line}, column ${at.col})` : ''}: ${reason}`;
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
