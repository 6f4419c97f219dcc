/**
 * Where the evaluator finds the suites (shared/evaluation/suites.ts, spec/evals.md §1–§2): loadSuites for every
 * suite read and checked at start-up, openFixture/readFixture for fixtures.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadSuites, openFixture, readFixture, suiteSummary } from '../../shared/evaluation/suites.js';
import type { Logger } from '../../shared/platform/log.js';

let root: string;
const suite = async (dir: string, capability: string) => {
  await mkdir(path.join(dir, capability), { recursive: true });
  await writeFile(path.join(dir, capability, 'suite.yaml'), `capability: ${capability}\nversion: 1\ncases: []\n`);
};

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'holon-suites-'));
  await suite(path.join(root, 'public'), 'text.count');
  await suite(path.join(root, 'public'), 'data.csv-profile');
  await suite(path.join(root, 'private'), 'data.csv-profile');
  await suite(path.join(root, 'private'), 'extraction.table');
  // A directory named like a capability but outside the suites: never reached.
  await suite(root, 'escaped');
});
afterAll(async () => rm(root, { recursive: true, force: true }));

// ---------------------------------------------------------------------------------------------
// loadSuites: every suite read and checked at start-up (shared/evaluation/suites.ts)
// ---------------------------------------------------------------------------------------------

/** A logger that keeps every line (parsed) instead of printing it. */
function captureLogger(): { log: Logger; lines: Array<Record<string, any>> } {
  const lines: Array<Record<string, any>> = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

const suiteYaml = (capability: string, cases: string, version = 1) => `capability: ${capability}\nversion: ${version}\npass_threshold: "0.5"\ncases:\n${cases}`;
const oneCase = (input = '{ text: hi }') => `  - id: one\n    input: ${input}\n    expect: { output: { ok: true } }\n`;

async function put(file: string, text: string | Buffer): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
}

describe('loadSuites', () => {
  let base: string;
  let pub: string;
  let priv: string;
  let loaded: Awaited<ReturnType<typeof loadSuites>>;
  let lines: Array<Record<string, any>>;
  const skipped = () => lines.filter((l) => l.msg === 'evaluation suite skipped: it is invalid');
  const skippedFile = (file: string) => skipped().find((l) => l.file === file);

  beforeAll(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'holon-load-suites-'));
    pub = path.join(base, 'public');
    priv = path.join(base, 'private');
    await put(path.join(base, 'outside.csv'), 'secret\n');
    await put(path.join(pub, 'README.md'), '# public samples\n');
    // Good: one case, and one with fixtures in files/.
    await put(path.join(pub, 'text.count', 'suite.yaml'), suiteYaml('text.count', oneCase()));
    await put(
      path.join(pub, 'data.files', 'suite.yaml'),
      suiteYaml(
        'data.files',
        oneCase('{ file: "holon://evals/data.files/big.csv", also: ["see holon://evals/data.files/notes.txt"] }') +
          `  - id: two\n    input: { file: "holon://evals/data.files/big.csv" }\n    expect: { paths: { /rows: 2 } }\n`,
        4,
      ),
    );
    await put(path.join(pub, 'data.files', 'files', 'big.csv'), 'a,b\n1,2\n3,4\n');
    await put(path.join(pub, 'data.files', 'files', 'notes.txt'), 'notes');
    await put(path.join(pub, 'data.files', 'files', 'unused.bin'), 'not named by any case');
    // Broken: invalid documents, a missing fixture, path traversal, a symlinked fixture, a wrong directory name.
    await put(path.join(pub, 'data.broken', 'suite.yaml'), 'capability: data.broken\nversion: 0\npass_threshold: 0.8\ncases: []\n');
    await put(path.join(pub, 'data.yaml-error', 'suite.yaml'), 'capability: [oops\n');
    await put(path.join(pub, 'data.missing', 'suite.yaml'), suiteYaml('data.missing', oneCase('{ file: "holon://evals/data.missing/gone.csv" }')));
    await put(path.join(pub, 'data.missing', 'files', 'other.csv'), 'x');
    await put(path.join(pub, 'data.nofiles', 'suite.yaml'), suiteYaml('data.nofiles', oneCase('{ file: "holon://evals/data.nofiles/a.csv" }')));
    await put(path.join(pub, 'data.escape', 'suite.yaml'), suiteYaml('data.escape', oneCase('{ file: "holon://evals/data.escape/../../outside.csv" }')));
    await put(path.join(pub, 'data.link', 'suite.yaml'), suiteYaml('data.link', oneCase('{ file: "holon://evals/data.link/link.csv" }')));
    await mkdir(path.join(pub, 'data.link', 'files'), { recursive: true });
    await symlink(path.join(base, 'outside.csv'), path.join(pub, 'data.link', 'files', 'link.csv'));
    await put(path.join(pub, 'data.dir', 'suite.yaml'), suiteYaml('data.dir', oneCase('{ file: "holon://evals/data.dir/sub" }')));
    await mkdir(path.join(pub, 'data.dir', 'files', 'sub'), { recursive: true });
    await put(path.join(pub, 'text.other', 'suite.yaml'), suiteYaml('text.count', oneCase()));
    await put(path.join(pub, 'Not_A_Capability', 'suite.yaml'), suiteYaml('text.count', oneCase()));
    await mkdir(path.join(pub, 'text.empty-dir'), { recursive: true });
    // Public and private: the private one replaces it (hidden), even when the private one is broken.
    await put(path.join(pub, 'text.shared', 'suite.yaml'), suiteYaml('text.shared', oneCase(), 1));
    await put(path.join(priv, 'text.shared', 'suite.yaml'), suiteYaml('text.shared', oneCase() + oneCase().replace('id: one', 'id: two'), 7));
    await put(path.join(pub, 'text.private-broken', 'suite.yaml'), suiteYaml('text.private-broken', oneCase()));
    await put(path.join(priv, 'text.private-broken', 'suite.yaml'), 'capability: text.private-broken\n');
    await put(path.join(priv, 'text.only-private', 'suite.yaml'), suiteYaml('text.only-private', oneCase()));

    const captured = captureLogger();
    lines = captured.lines;
    loaded = await loadSuites({ publicDir: pub, privateDir: priv }, captured.log);
  });
  afterAll(async () => rm(base, { recursive: true, force: true }));

  test('the good suites, by capability; a private suite replaces the public one and is hidden', () => {
    expect([...loaded.suites.keys()]).toEqual(['data.files', 'text.count', 'text.only-private', 'text.shared']);
    expect(loaded.get('text.count')).toMatchObject({
      capability: 'text.count',
      hidden: false,
      file: path.join(pub, 'text.count', 'suite.yaml'),
      suite: { capability: 'text.count', version: 1, pass_threshold: '0.5', cases: [{ id: 'one' }] },
    });
    expect(loaded.get('text.shared')).toMatchObject({ hidden: true, file: path.join(priv, 'text.shared', 'suite.yaml'), suite: { version: 7 } });
    expect(loaded.get('text.shared')!.suite.cases).toHaveLength(2);
    expect(loaded.get('text.only-private')!.hidden).toBe(true);
    expect(suiteSummary(loaded.get('text.shared')!)).toEqual({ capability: 'text.shared', version: 7, hidden: true, cases: 2, threshold: '0.5' });
    expect(loaded.forCapabilities(['text.summarize', 'text.shared', 'text.count', 'text.shared']).map((s) => s.capability)).toEqual([
      'text.shared',
      'text.count',
    ]);
  });

  test('fixtures: the ones the cases name, with what a link needs', async () => {
    const s = loaded.get('data.files')!;
    expect(s.fixturesDir).toBe(await realpath(path.join(pub, 'data.files', 'files')));
    expect([...s.fixtures.keys()].sort()).toEqual(['big.csv', 'notes.txt']);
    expect(s.fixtures.get('big.csv')).toEqual({
      name: 'big.csv',
      handle: 'holon://evals/data.files/big.csv',
      file: path.join(s.fixturesDir, 'big.csv'),
      size: 12,
      sha256: createHash('sha256').update('a,b\n1,2\n3,4\n').digest('hex'),
      contentType: 'text/csv',
    });
    expect(s.fixtures.get('notes.txt')!.contentType).toBe('text/plain');
  });

  test('a broken suite is skipped and logged with its file and its problems', () => {
    for (const name of ['data.broken', 'data.yaml-error', 'data.missing', 'data.nofiles', 'data.escape', 'data.link', 'data.dir', 'text.other']) {
      expect(loaded.get(name), name).toBeUndefined();
      const line = skippedFile(path.join(pub, name, 'suite.yaml'));
      expect(line, `no log line for ${name}`).toBeDefined();
      expect(line!.level).toBe(50);
      expect(line!.problems.length, name).toBeGreaterThan(0);
    }
    expect(skippedFile(path.join(pub, 'data.broken', 'suite.yaml'))!.problems.map((p: { path: string }) => p.path)).toEqual([
      '$.cases',
      '$.pass_threshold',
      '$.version',
    ]);
    expect(skippedFile(path.join(pub, 'data.yaml-error', 'suite.yaml'))!.problems[0].message).toMatch(/not valid YAML/);
  });

  test('a fixture that is missing, outside files/, a symbolic link or a directory is a problem', () => {
    const problems = (name: string) => skippedFile(path.join(pub, name, 'suite.yaml'))!.problems as Array<{ path: string; message: string }>;
    expect(problems('data.missing')).toEqual([
      { path: '$.cases[0].input', message: expect.stringMatching(/fixture "gone.csv": there is no file gone.csv in /) },
    ]);
    expect(problems('data.nofiles')).toEqual([{ path: '$.cases[0].input', message: expect.stringMatching(/files\/ directory .* does not exist/) }]);
    expect(problems('data.escape')).toEqual([{ path: '$.cases[0].input.file', message: expect.stringMatching(/is not a plain file name/) }]);
    expect(problems('data.link')[0]!.message).toMatch(/symbolic link: fixtures must be regular files/);
    expect(problems('data.dir')[0]!.message).toMatch(/not a regular file/);
  });

  test('the directory must be named like the capability, and be a capability', () => {
    expect(skippedFile(path.join(pub, 'text.other', 'suite.yaml'))!.problems).toEqual([
      { path: '$.capability', message: expect.stringContaining('"text.count" is not the name of the directory holding the suite ("text.other")') },
    ]);
    expect(skippedFile(path.join(pub, 'Not_A_Capability', 'suite.yaml'))!.problems[0].message).toMatch(/is not a capability/);
    // The public text.count is not replaced by the misnamed one.
    expect(loaded.get('text.count')!.file).toBe(path.join(pub, 'text.count', 'suite.yaml'));
  });

  test('a broken private suite is not replaced by the public one: the capability has no suite', () => {
    expect(loaded.get('text.private-broken')).toBeUndefined();
    expect(skippedFile(path.join(priv, 'text.private-broken', 'suite.yaml'))).toBeDefined();
    expect(lines.some((l) => l.capability === 'text.private-broken' && /public one is not used/.test(l.msg))).toBe(true);
  });

  test('a directory without suite.yaml is a warning; files beside the suites are ignored', () => {
    expect(lines.some((l) => l.level === 40 && l.dir === path.join(pub, 'text.empty-dir'))).toBe(true);
    expect(lines.some((l) => JSON.stringify(l).includes('README.md'))).toBe(false);
  });

  test('one summary line of what was loaded', () => {
    const summary = lines.find((l) => l.msg === 'evaluation suites loaded')!;
    expect(summary.suites).toEqual([
      { capability: 'data.files', version: 4, hidden: false },
      { capability: 'text.count', version: 1, hidden: false },
      { capability: 'text.only-private', version: 1, hidden: true },
      { capability: 'text.shared', version: 7, hidden: true },
    ]);
  });

  test('never throws: missing directories are logged, the catalogue is empty', async () => {
    const { log, lines: got } = captureLogger();
    const empty = await loadSuites({ publicDir: path.join(base, 'nope'), privateDir: path.join(base, 'nope-private') }, log);
    expect(empty.suites.size).toBe(0);
    expect(got.some((l) => l.level === 40 && l.dir === path.join(base, 'nope'))).toBe(true);
    expect(got.some((l) => l.level === 50 && l.dir === path.join(base, 'nope-private'))).toBe(true);
    // A file where a directory is expected.
    const notDir = await loadSuites({ publicDir: path.join(base, 'outside.csv') }, log);
    expect(notDir.suites.size).toBe(0);
  });

  describe('openFixture and readFixture', () => {
    test("read a fixture's bytes", async () => {
      const s = loaded.get('data.files')!;
      expect((await readFixture(s, 'big.csv'))!.toString()).toBe('a,b\n1,2\n3,4\n');
      const opened = (await openFixture(s, 'notes.txt'))!;
      expect(opened.fixture.size).toBe(5);
      const chunks: Buffer[] = [];
      for await (const c of opened.stream) chunks.push(c as Buffer);
      expect(Buffer.concat(chunks).toString()).toBe('notes');
    });

    test('only names the cases use, never a path outside files/', async () => {
      const s = loaded.get('data.files')!;
      for (const name of ['unused.bin', '../suite.yaml', '../../outside.csv', '/etc/passwd', '..', '', 'big.csv/..', `${s.fixturesDir}/big.csv`]) {
        expect(await openFixture(s, name), name).toBeNull();
        expect(await readFixture(s, name), name).toBeNull();
      }
      // A catalogue entry tampered with still cannot climb out.
      const tampered = { ...s, fixtures: new Map([['../../outside.csv', s.fixtures.get('big.csv')!]]) };
      expect(await openFixture(tampered, '../../outside.csv')).toBeNull();
    });

    test('a fixture replaced by a symbolic link, or changed in size since start-up, is not served', async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'holon-fixture-'));
      try {
        await put(path.join(dir, 'data.x', 'suite.yaml'), suiteYaml('data.x', oneCase('{ a: "holon://evals/data.x/a.csv", b: "holon://evals/data.x/b.csv" }')));
        await put(path.join(dir, 'data.x', 'files', 'a.csv'), 'aaa');
        await put(path.join(dir, 'data.x', 'files', 'b.csv'), 'bbb');
        const s = (await loadSuites({ publicDir: dir }, captureLogger().log)).get('data.x')!;
        expect((await readFixture(s, 'a.csv'))!.toString()).toBe('aaa');
        await writeFile(path.join(dir, 'data.x', 'files', 'a.csv'), 'longer now');
        expect(await readFixture(s, 'a.csv')).toBeNull();
        await rm(path.join(dir, 'data.x', 'files', 'b.csv'));
        await symlink(path.join(base, 'outside.csv'), path.join(dir, 'data.x', 'files', 'b.csv'));
        expect(await readFixture(s, 'b.csv')).toBeNull();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
});
