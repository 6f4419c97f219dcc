/**
 * Each setting is declared once, in shared/platform/settings/: docs/configuration.md has a row for every declaration,
 * and no code in shared/ or services/ reads a HOLON_ variable from the environment itself, but the CLI's client
 * commands named below (they talk to a remote gateway and load no configuration of their own).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_DOC } from '../../scripts/config-docs.js';
import { DOCUMENTED } from '../../shared/platform/settings/index.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DECLARATIONS = 'shared/platform/settings/';

/** The files allowed to read a HOLON_ variable themselves, and which: `holon publish | credential | earnings | payout` (`--url`, `--key`). */
const READ_DIRECTLY: Readonly<Record<string, readonly string[]>> = {
  'services/cli/publish.ts': ['HOLON_KEY', 'HOLON_URL'],
  'services/cli/credential.ts': ['HOLON_KEY', 'HOLON_URL'],
  'services/cli/earnings.ts': ['HOLON_KEY', 'HOLON_URL'],
  'services/cli/payout.ts': ['HOLON_KEY', 'HOLON_URL'],
};

/** `env.HOLON_X`, `process.env.HOLON_X`, `env?.HOLON_X`, `env['HOLON_X']`. */
const ENV_READ = /\benv(?:\?\.|\.|\[\s*['"`])(HOLON_[A-Z0-9_]*)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sourceFiles(rel);
    return /\.(ts|js|mjs)$/.test(e.name) ? [rel] : [];
  });
}

describe('settings declared once', () => {
  it('docs/configuration.md has a row for every declared setting', () => {
    const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
    expect(DOCUMENTED.length).toBeGreaterThan(70);
    const missing = DOCUMENTED.filter((s) => !doc.includes(`\n| \`${s.env}\` | `)).map((s) => s.env);
    expect(missing).toEqual([]);
  });

  it('no code outside shared/platform/settings/ reads a HOLON_ variable itself (but the client commands named here)', () => {
    const files = [...sourceFiles('shared'), ...sourceFiles('services')].filter((f) => !f.startsWith(DECLARATIONS));
    expect(files.length).toBeGreaterThan(100);
    const stray: string[] = [];
    const seen = new Map<string, Set<string>>();
    for (const file of files) {
      for (const m of readFileSync(path.join(ROOT, file), 'utf8').matchAll(ENV_READ)) {
        const name = m[1]!;
        if (READ_DIRECTLY[file]?.includes(name)) seen.set(file, (seen.get(file) ?? new Set()).add(name));
        else stray.push(`${file}: ${name}`);
      }
    }
    expect(stray, 'read through shared/platform/config.ts (loadConfig) or a declaration (valueIn) instead').toEqual([]);
    // Every exception is still needed, and names a declared variable.
    const declared = new Set(DOCUMENTED.map((s) => s.env));
    for (const [file, names] of Object.entries(READ_DIRECTLY)) {
      expect([...(seen.get(file) ?? [])].sort(), file).toEqual([...names]);
      for (const name of names) expect(declared.has(name), name).toBe(true);
    }
  });
});
