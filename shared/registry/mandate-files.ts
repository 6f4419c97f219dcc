/**
 * Mandates for the dev gateway: every `*.yaml`, `*.yml` and `*.json` file directly in one directory
 * (not recursive, dotfiles ignored), in name order, each parsed with parseMandate (spec/mandate.md).
 * An invalid file, or one whose mandate id an earlier file already declared, is reported and skipped;
 * a missing directory is reported too. Loading never throws.
 */
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { Problem } from '../core/errors.js';
import type { Logger } from '../platform/log.js';
import { parseMandate, type Mandate } from '../core/mandate/index.js';
import type { FileProblems } from './dev-registry.js';

const MANDATE_FILE_EXTENSIONS = ['.yaml', '.yml', '.json'] as const;

export interface LoadMandateFilesOptions {
  /** Invalid files are logged as warnings when given. */
  log?: Logger;
}

export async function loadMandateFiles(dir: string, options: LoadMandateFilesOptions = {}): Promise<{ mandates: Mandate[]; problems: FileProblems[] }> {
  const mandates: Mandate[] = [];
  const problems: FileProblems[] = [];
  const report = (file: string, list: Problem[]): void => {
    problems.push({ file, problems: list });
    options.log?.warn({ file, problems: list }, `skipped ${file}: ${list.map((p) => `${p.path} ${p.message}`).join('; ')}`);
  };

  let names: string[];
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    names = entries
      .filter((e) => !e.name.startsWith('.') && (e.isFile() || e.isSymbolicLink()))
      .map((e) => e.name)
      .filter((n) => (MANDATE_FILE_EXTENSIONS as readonly string[]).includes(extname(n).toLowerCase()))
      .sort();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    report(dir, [{ path: '$', message: code === 'ENOENT' ? 'the directory does not exist' : `cannot read the directory: ${code}` }]);
    return { mandates, problems };
  }

  const seen = new Map<string, string>();
  for (const name of names) {
    const file = join(dir, name);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      report(file, [{ path: '$', message: `cannot read the file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` }]);
      continue;
    }
    const result = parseMandate(text, extname(name).toLowerCase() === '.json' ? 'json' : 'yaml');
    if (!result.ok) {
      report(file, result.problems);
      continue;
    }
    const first = seen.get(result.mandate.id);
    if (first !== undefined) {
      report(file, [{ path: '$.id', message: `mandate ${result.mandate.id} is already declared in ${first}` }]);
      continue;
    }
    seen.set(result.mandate.id, file);
    mandates.push(result.mandate);
  }
  return { mandates, problems };
}
