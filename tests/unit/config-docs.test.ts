/**
 * docs/configuration.md is generated from the declarations of shared/platform/settings/ (scripts/config-docs.ts): the
 * page is exactly what the generator writes, every variable the code reads has its row, every row names a variable the
 * code reads, and no code outside the declarations reads a HOLON_ variable itself (but the few named below).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_DOC, readersText, renderConfiguration } from '../../scripts/config-docs.js';
import { loadConfig } from '../../shared/platform/config.js';
import { DOCUMENTED } from '../../shared/platform/settings/index.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (rel: string) => readFileSync(path.join(ROOT, rel), 'utf8');

/** The variables loadConfig looks at, recorded through a proxy over an environment (dev, then production). */
function readByLoadConfig(): Set<string> {
  const names = new Set<string>();
  for (const base of [{}, { NODE_ENV: 'production' }] as NodeJS.ProcessEnv[]) {
    const env = new Proxy(base, {
      get(target, key) {
        if (typeof key === 'string') names.add(key);
        return target[key as string];
      },
    });
    try {
      loadConfig(env);
    } catch {
      /* production without its settings: refused, after reading them */
    }
  }
  return names;
}

/** `env.X` / `process.env.X` / `${X…}` in the files that read the environment themselves. */
function readElsewhere(): Map<string, string> {
  const found = new Map<string, string>();
  const scan = (rel: string, pattern: RegExp) => {
    for (const m of read(rel).matchAll(pattern)) if (!found.has(m[1]!)) found.set(m[1]!, rel);
  };
  for (const f of readdirSync(path.join(ROOT, 'services/cli'))) if (f.endsWith('.ts')) scan(`services/cli/${f}`, /\benv\.([A-Z][A-Z0-9_]*)/g);
  for (const dir of readdirSync(path.join(ROOT, 'agents'), { withFileTypes: true })) {
    if (dir.isDirectory()) scan(`agents/${dir.name}/tool.mjs`, /\benv\.([A-Z][A-Z0-9_]*)/g);
  }
  scan('agents/host.mjs', /\benv\.([A-Z][A-Z0-9_]*)/g);
  scan('infra/entrypoint.sh', /\$\{([A-Z][A-Z0-9_]*)/g);
  return found;
}

describe('docs/configuration.md', () => {
  it('is what scripts/config-docs.ts generates from shared/platform/settings/ (run it after changing a declaration)', () => {
    expect(readFileSync(CONFIGURATION_DOC, 'utf8')).toBe(renderConfiguration());
  });

  it('has a row for every variable the code reads, and no row for one it does not', () => {
    const listed = new Set(DOCUMENTED.map((s) => s.env));
    const byConfig = readByLoadConfig();
    const elsewhere = readElsewhere();
    expect([...byConfig].filter((n) => !listed.has(n)).sort(), 'read by loadConfig, not declared').toEqual([]);
    expect(
      [...elsewhere].filter(([n]) => !listed.has(n)).map(([n, f]) => `${n} (${f})`),
      'read elsewhere, not declared',
    ).toEqual([]);
    expect([...listed].filter((n) => !byConfig.has(n) && !elsewhere.has(n)).sort(), 'listed but read nowhere').toEqual([]);
  });

  it('says who reads each variable', () => {
    for (const s of DOCUMENTED) expect(s.roles.length, s.env).toBeGreaterThan(0);
    expect(readersText(['api', 'runner', 'settler', 'evaluator', 'backup, restore, audit'])).toBe('every role, backup, restore, audit');
    expect(readersText(['serve', 'entrypoint'])).toBe('`holon serve`, entrypoint');
    expect(readersText(['api', 'evaluator'])).toBe('api, evaluator');
  });

  it('the README names no environment variable the table does not', () => {
    const listed = new Set(DOCUMENTED.map((s) => s.env));
    const named = [...read('README.md').matchAll(/\b((?:HOLON|OTEL|ANTHROPIC)_[A-Z0-9_]+|DATABASE_URL|REDIS_URL)\b/g)].map((m) => m[1]!);
    expect(named.filter((n) => !listed.has(n))).toEqual([]);
  });
});
