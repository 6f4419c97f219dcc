/**
 * `holon validate <file>… [--json]`: validate manifests and mandates before publishing or using them.
 * The kind of document is recognised by its fields. Exit 0 when every file is valid, 1 when any is invalid,
 * 2 when the command itself is misused (no file given, unknown option).
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { parseDocumentText } from '../../shared/core/documents.js';
import type { Problem } from '../../shared/core/errors.js';
import { validateManifest } from '../../shared/core/manifest/index.js';
import { validateMandate } from '../../shared/core/mandate/index.js';

export type DocumentKind = 'manifest' | 'mandate' | 'unknown';

export interface FileReport {
  file: string;
  kind: DocumentKind;
  valid: boolean;
  /** `ns/name@version` for a manifest, the mandate id for a mandate, when readable. */
  id?: string;
  problems: Problem[];
}

const MANIFEST_FIELDS = ['interface', 'pricing', 'runtime', 'capabilities', 'version'];
const MANDATE_FIELDS = ['budget', 'issuer', 'grantee', 'allow', 'delegation'];

export function recogniseKind(doc: unknown): DocumentKind {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return 'unknown';
  const keys = Object.keys(doc);
  const manifestScore = MANIFEST_FIELDS.filter((f) => keys.includes(f)).length;
  const mandateScore = MANDATE_FIELDS.filter((f) => keys.includes(f)).length;
  if (manifestScore === 0 && mandateScore === 0) return 'unknown';
  return manifestScore >= mandateScore ? 'manifest' : 'mandate';
}

export async function validateFile(file: string): Promise<FileReport> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    return {
      file,
      kind: 'unknown',
      valid: false,
      problems: [{ path: '$', message: `cannot read the file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` }],
    };
  }
  const format = /\.json$/i.test(file) ? 'json' : /\.ya?ml$/i.test(file) ? 'yaml' : undefined;
  const parsed = parseDocumentText(text, format);
  if (!parsed.ok) return { file, kind: 'unknown', valid: false, problems: parsed.problems };
  const kind = recogniseKind(parsed.value);
  if (kind === 'manifest') {
    const r = validateManifest(parsed.value);
    return r.ok ? { file, kind, valid: true, id: `${r.manifest.id}@${r.manifest.version}`, problems: [] } : { file, kind, valid: false, problems: r.problems };
  }
  if (kind === 'mandate') {
    const r = validateMandate(parsed.value);
    return r.ok ? { file, kind, valid: true, id: r.mandate.id, problems: [] } : { file, kind, valid: false, problems: r.problems };
  }
  return {
    file,
    kind,
    valid: false,
    problems: [{ path: '$', message: 'neither a manifest (id, version, interface, pricing, runtime) nor a mandate (id, issuer, grantee, allow, budget)' }],
  };
}

export function formatReport(r: FileReport): string {
  if (r.valid) return `✓ ${r.file}: valid ${r.kind} ${r.id ?? ''}`.trimEnd() + '\n';
  const what = r.kind === 'unknown' ? 'not valid' : `invalid ${r.kind}`;
  const n = r.problems.length;
  return `✗ ${r.file}: ${what}, ${n} problem${n === 1 ? '' : 's'}\n` + r.problems.map((p) => `    ${p.path}: ${p.message}\n`).join('');
}

export async function validateCommand(argv: string[]): Promise<number> {
  const options = { json: { type: 'boolean', default: false } } as const;
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: typeof options }>>;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options });
  } catch (e) {
    process.stderr.write(`holon validate: ${(e as Error).message}\nusage: holon validate <file>… [--json]\n`);
    return 2;
  }
  const files = parsed.positionals;
  if (files.length === 0) {
    process.stderr.write('usage: holon validate <file>… [--json]\n');
    return 2;
  }
  const reports: FileReport[] = [];
  for (const f of files) reports.push(await validateFile(f));
  if (parsed.values.json) {
    process.stdout.write(JSON.stringify(files.length === 1 ? reports[0] : reports, null, 2) + '\n');
  } else {
    for (const r of reports) process.stdout.write(formatReport(r));
  }
  return reports.every((r) => r.valid) ? 0 : 1;
}
