/**
 * validateManifest: the document against the manifest JSON Schema (schema.ts), then against every rule
 * of spec/manifest.md (rules/). Every problem is collected, deduplicated and sorted by path.
 */
import { jsonCopy } from '../documents.js';
import type { Problem } from '../errors.js';
import { ajvProblems, createAjv, type ValidateFunction } from '../schema/ajv.js';
import { normalizeManifest } from './normalize.js';
import { checkCalls } from './rules/calls.js';
import { checkIdentity } from './rules/identity.js';
import { checkInterface } from './rules/interface.js';
import { checkLineage, type ResolveUpstream } from './rules/lineage.js';
import { checkPricing } from './rules/pricing.js';
import { checkRuntime } from './rules/runtime.js';
import { childPath, type Report } from './rules/util.js';
import { isJsonObject, type JsonObject } from '../json.js';
import { manifestSchema, PATTERN_MESSAGES } from './schema.js';
import type { Manifest } from './types.js';

export type { UpstreamInfo } from './rules/lineage.js';

export interface ValidateManifestOptions {
  /**
   * Look up the upstream version named by `lineage.forked_from`; null when it is not a listed version.
   * Without it, only the syntax of the lineage is checked.
   */
  resolveUpstream?: ResolveUpstream;
}

export type ManifestResult = { ok: true; manifest: Manifest; problems: [] } | { ok: false; problems: Problem[] };

type AjvError = NonNullable<ValidateFunction['errors']>[number];
type SchemaProblem = Problem & { keyword: string };

let manifestValidator: ValidateFunction | undefined;

export function validateManifest(doc: unknown, options: ValidateManifestOptions = {}): ManifestResult {
  // Work on a JSON copy: what is validated is exactly what gets stored, and cycles or BigInts are refused here.
  const copied = jsonCopy(doc);
  if (!copied.ok) return copied;
  const copy = copied.value;

  const schemaProblems = schemaStage(copy);
  const ruleProblems: Problem[] = [];
  if (isJsonObject(copy)) {
    const report: Report = (path, message) => ruleProblems.push({ path, message });
    checkNul(copy, report);
    checkIdentity(copy, report);
    checkInterface(copy, report);
    checkPricing(copy, report);
    checkCalls(copy, report);
    checkRuntime(copy, report);
    checkLineage(copy, report, options.resolveUpstream);
  }

  // A rule says more than the schema's "must be string" / "must match pattern" about the same field.
  const rulePaths = new Set(ruleProblems.map((p) => p.path));
  const problems = [
    ...ruleProblems,
    ...schemaProblems
      .filter((p) => !(rulePaths.has(p.path) && (p.keyword === 'type' || p.keyword === 'pattern')))
      .map(({ path, message }) => ({ path, message })),
  ];
  if (problems.length) return { ok: false, problems: sortProblems(problems) };
  return { ok: true, manifest: normalizeManifest(copy as JsonObject), problems: [] };
}

function schemaStage(doc: unknown): SchemaProblem[] {
  manifestValidator ??= createAjv().compile(manifestSchema);
  if (manifestValidator(doc)) return [];
  const out: SchemaProblem[] = [];
  for (const e of manifestValidator.errors ?? []) {
    if (e.keyword === 'propertyNames') continue; // its inner error names the key itself
    const converted = ajvProblems([e], '$')[0]!;
    const path = e.propertyName === undefined ? converted.path : childPath(converted.path, e.propertyName);
    out.push({ path, message: schemaMessage(e, converted.message), keyword: e.keyword });
  }
  return out;
}

function schemaMessage(e: AjvError, fallback: string): string {
  const params = e.params as { pattern?: string; limit?: number };
  const limit = params.limit ?? 0;
  switch (e.keyword) {
    case 'pattern':
      return PATTERN_MESSAGES[params.pattern ?? ''] ?? fallback;
    case 'minItems':
      return `must have at least ${limit} ${limit === 1 ? 'entry' : 'entries'}`;
    case 'maxItems':
      return `must have at most ${limit} entries`;
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must be at least ${limit} characters long`;
    case 'maxLength':
      return `must be at most ${limit} characters long`;
    case 'minimum':
      return `must be at least ${limit}`;
    case 'maximum':
      return `must be at most ${limit}`;
    default:
      return fallback;
  }
}

/** Postgres JSONB cannot store NUL: refuse it in every string and field name. Iterative, so depth cannot overflow. */
function checkNul(doc: JsonObject, report: Report): void {
  const stack: Array<{ value: unknown; path: string }> = [{ value: doc, path: '$' }];
  while (stack.length) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) report(path, 'contains a NUL character');
    } else if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) stack.push({ value: v, path: childPath(path, i) });
    } else if (isJsonObject(value)) {
      for (const [key, v] of Object.entries(value)) {
        const at = childPath(path, key);
        if (key.includes('\u0000')) report(at, 'the field name contains a NUL character');
        stack.push({ value: v, path: at });
      }
    }
  }
}

/** Deduplicate, then sort by path (array indexes in numeric order), then by message. */
export function sortProblems(problems: Problem[]): Problem[] {
  const unique = new Map<string, Problem>();
  for (const p of problems) unique.set(`${p.path}\u0001${p.message}`, p);
  const key = (path: string) => path.replace(/\[(\d+)\]/g, (_, n: string) => `[${n.padStart(12, '0')}]`);
  return [...unique.values()].sort((a, b) => {
    const ka = key(a.path);
    const kb = key(b.path);
    if (ka !== kb) return ka < kb ? -1 : 1;
    return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
  });
}
