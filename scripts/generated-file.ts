/**
 * A file generated from the code (docs/configuration.md, docs/api.md, client/openapi.d.ts): written, or with
 * `--check` compared with what is committed (exit 1 and a hint when they differ), so CI and people use one rule.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function writeOrCheck(options: { file: string; text: string; argv: readonly string[]; stale: string; wrote?: string }): number {
  const shown = path.relative(process.cwd(), options.file);
  if (options.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(options.file, 'utf8');
    } catch {
      /* missing: differs */
    }
    if (current === options.text) return 0;
    process.stderr.write(`${options.stale}\n`);
    return 1;
  }
  writeFileSync(options.file, options.text);
  process.stdout.write(`wrote ${shown}${options.wrote ? ` (${options.wrote})` : ''}\n`);
  return 0;
}
