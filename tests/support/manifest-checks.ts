/**
 * Checking manifests in tests of shared/core/manifest/ (tests/unit/manifest*.test.ts): the spec §1 example
 * (tests/fixtures/manifests/spec-example.yaml) as a document to change, `check(mutate)` to validate the changed copy,
 * and expectations on the result: `expectValid(r)`, `expectProblem(r, '$.pricing.amount', 'words')`.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { parseDocumentText } from '../../shared/core/documents.js';
import type { Problem } from '../../shared/core/errors.js';
import { validateManifest, type ManifestResult, type UpstreamInfo, type ValidateManifestOptions } from '../../shared/core/manifest/index.js';

/** A manifest document as parsed, any shape. */
export type AnyDoc = Record<string, any>;

/** The text of tests/fixtures/manifests/<name>. */
export const fixture = (name: string) => readFileSync(new URL(`../fixtures/manifests/${name}`, import.meta.url), 'utf8');
export const SPEC_YAML = fixture('spec-example.yaml');

/** A fresh copy of the spec §1 example, as a parsed document. */
export function specDoc(): AnyDoc {
  const parsed = parseDocumentText(SPEC_YAML);
  if (!parsed.ok) throw new Error('fixture does not parse');
  return parsed.value as AnyDoc;
}

/** The spec example, changed by `mutate`, validated. */
export function check(mutate: (d: AnyDoc) => void, options?: ValidateManifestOptions): ManifestResult {
  const d = specDoc();
  mutate(d);
  return validateManifest(d, options);
}

export function problemsOf(r: ManifestResult): Problem[] {
  return r.ok ? [] : r.problems;
}

/** The result is invalid and has a problem at exactly `path` (whose message contains `words`, when given). */
export function expectProblem(r: ManifestResult, path: string, words?: string | RegExp): void {
  expect(r.ok).toBe(false);
  const at = problemsOf(r).filter((p) => p.path === path);
  expect(at, `no problem at ${path}; got ${JSON.stringify(problemsOf(r))}`).not.toHaveLength(0);
  if (words !== undefined) {
    const ok = at.some((p) => (typeof words === 'string' ? p.message.includes(words) : words.test(p.message)));
    expect(ok, `no message matching ${String(words)} at ${path}; got ${JSON.stringify(at)}`).toBe(true);
  }
}

export function expectValid(r: ManifestResult): void {
  expect(problemsOf(r)).toEqual([]);
  expect(r.ok).toBe(true);
}

/** What validation knows of the agent a fork is forked from: its fork terms (10 % minimum royalty, forks allowed). */
export const upstream = (over: Partial<UpstreamInfo> = {}): UpstreamInfo => ({
  forks: { minRoyalty: { num: 10n, den: 100n }, allowed: true },
  ...over,
});
