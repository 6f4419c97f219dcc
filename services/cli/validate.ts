/**
 * `holon validate <file>… [--json]`: validate manifests, mandates and evaluation suites before publishing or using
 * them. The kind of document is recognised by its fields; a file named `suite.yaml` (or `.yml`, `.json`), or a
 * document with a top-level `cases` list, is an evaluation suite. A suite's fixtures are checked in the `files/`
 * directory beside it, and a file named `suite.yaml` must sit in a directory named like its capability (the
 * `evals/<capability>/suite.yaml` layout). Exit 0 when every file is valid, 1 when any is invalid, 2 when the
 * command itself is misused (no file given, unknown option).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseDocumentText } from '../../shared/core/documents.js';
import type { Problem } from '../../shared/core/errors.js';
import { validateManifest } from '../../shared/core/manifest/index.js';
import { mandateWarnings, validateMandate } from '../../shared/core/mandate/index.js';
import { checkSuite, SUITE_FILE } from '../../shared/evaluation/suites.js';

export type DocumentKind = 'manifest' | 'mandate' | 'suite' | 'unknown';

export interface FileReport {
  file: string;
  kind: DocumentKind;
  valid: boolean;
  /** `ns/name@version` for a manifest, the mandate id for a mandate, `<capability> v<version>` for a suite. */
  id?: string;
  problems: Problem[];
  /** Valid, but almost certainly not meant (a mandate's per_call above its total): flagged, the exit code unchanged. */
  warnings?: Problem[];
}

const MANIFEST_FIELDS = ['interface', 'pricing', 'runtime', 'capabilities', 'version'];
const MANDATE_FIELDS = ['budget', 'issuer', 'grantee', 'allow', 'delegation'];

const SUITE_FILE_NAME = /^suite\.(?:ya?ml|json)$/i;

/** Whether the file is an evaluation suite by its name alone (`suite.yaml`, `suite.yml`, `suite.json`). */
function isSuiteFileName(file: string): boolean {
  return SUITE_FILE_NAME.test(path.basename(file));
}

export function recogniseKind(doc: unknown): DocumentKind {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return 'unknown';
  const keys = Object.keys(doc);
  // Neither a manifest nor a mandate has `cases`.
  if (keys.includes('cases')) return 'suite';
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
  const kind = isSuiteFileName(file) ? 'suite' : recogniseKind(parsed.value);
  if (kind === 'suite') {
    // Fixtures are looked for in files/ beside the suite; only the layout's own file name implies the directory rule.
    const r = await checkSuite(parsed.value, file, { directoryName: path.basename(file) === SUITE_FILE });
    return r.ok
      ? {
          file,
          kind,
          valid: true,
          id: `${r.suite.capability} v${r.suite.version}, ${r.suite.cases.length} case${r.suite.cases.length === 1 ? '' : 's'}`,
          problems: [],
        }
      : { file, kind, valid: false, problems: r.problems };
  }
  if (kind === 'manifest') {
    const r = validateManifest(parsed.value);
    return r.ok ? { file, kind, valid: true, id: `${r.manifest.id}@${r.manifest.version}`, problems: [] } : { file, kind, valid: false, problems: r.problems };
  }
  if (kind === 'mandate') {
    const r = validateMandate(parsed.value);
    if (!r.ok) return { file, kind, valid: false, problems: r.problems };
    const warnings = mandateWarnings(r.mandate);
    return { file, kind, valid: true, id: r.mandate.id, problems: [], ...(warnings.length ? { warnings } : {}) };
  }
  return {
    file,
    kind,
    valid: false,
    problems: [
      {
        path: '$',
        message:
          'neither a manifest (id, version, interface, pricing, runtime), a mandate (id, issuer, grantee, allow, budget) nor an evaluation suite (capability, version, pass_threshold, cases)',
      },
    ],
  };
}

export function formatReport(r: FileReport): string {
  const warnings = (r.warnings ?? []).map((p) => `  ! ${p.path}: ${p.message}\n`).join('');
  if (r.valid) return `✓ ${r.file}: valid ${r.kind} ${r.id ?? ''}`.trimEnd() + '\n' + warnings;
  const what = r.kind === 'unknown' ? 'not valid' : `invalid ${r.kind}`;
  const n = r.problems.length;
  return `✗ ${r.file}: ${what}, ${n} problem${n === 1 ? '' : 's'}\n` + r.problems.map((p) => `    ${p.path}: ${p.message}\n`).join('');
}

const VALIDATE_USAGE = `usage: holon validate <file>… [--json]

Checks each file and lists every problem with its JSON path. What a file is comes from its fields:
  manifest          id, version, interface, pricing, runtime (holon.yaml)
  mandate           id, issuer, grantee, allow, budget
  evaluation suite  a file named suite.yaml (.yml, .json), or a document with a top-level cases list;
                    every holon://evals/<capability>/<name> its inputs use must be a file in files/ beside
                    it, and a suite.yaml must sit in a directory named like its capability
                    (evals/<capability>/suite.yaml)
Warnings (!) flag what is valid but almost certainly not meant, such as a mandate whose per_call is
above its total; they leave the exit code alone.
Exit 0 when every file is valid, 1 when any is invalid, 2 on misuse.
  --json            one machine-readable report per file
`;

export async function validateCommand(argv: string[]): Promise<number> {
  const options = { json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } } as const;
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: typeof options }>>;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options });
  } catch (e) {
    process.stderr.write(`holon validate: ${(e as Error).message}\n${VALIDATE_USAGE}`);
    return 2;
  }
  if (parsed.values.help) {
    process.stdout.write(VALIDATE_USAGE);
    return 0;
  }
  const files = parsed.positionals;
  if (files.length === 0) {
    process.stderr.write(VALIDATE_USAGE);
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
