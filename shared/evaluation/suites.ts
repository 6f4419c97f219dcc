/**
 * The evaluation suites (spec/evals.md §1–§2, docs/evaluation.md "Suites"): `evals/<capability>/suite.yaml` in the
 * repository (HOLON_EVALS to point elsewhere), replaced capability by capability by
 * `HOLON_PRIVATE_EVALS/<capability>/suite.yaml`, whose cases are hidden. Fixtures are the files of
 * `<capability>/files/`, named in inputs as `holon://evals/<capability>/<name>`.
 *
 * loadSuites reads and checks them all once, at start-up: a broken suite is logged with its file and its problems and
 * left out, never a crash. checkSuite / readSuiteFile are the same checks for one file (`holon validate`).
 * openFixture / readFixture give the evaluator a fixture's bytes, only for names the suite's cases use, never a
 * path outside the suite's files/ directory.
 */
import { createHash } from 'node:crypto';
import { constants, type ReadStream } from 'node:fs';
import { access, type FileHandle, open, readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { MAX_DOCUMENT_BYTES, parseDocumentText } from '../core/documents.js';
import type { Problem } from '../core/errors.js';
import { caseFixtures, isFixtureName, validateSuite, type Suite } from '../core/evals/index.js';
import { isCapabilityClass } from '../core/identifiers.js';
import { sortProblems } from '../core/manifest/index.js';
import type { Logger } from '../platform/log.js';

export interface SuiteDirs {
  /** The public samples (the repository's `evals/`, or HOLON_EVALS). */
  publicDir: string;
  /** HOLON_PRIVATE_EVALS, when set. */
  privateDir?: string;
}

export const SUITE_FILE = 'suite.yaml';
const FIXTURES_DIR = 'files';
/** The largest fixture file accepted (it is hashed at start-up and served to agents under evaluation). */
const MAX_FIXTURE_BYTES = 100 * 1024 * 1024;
/** Problems of one broken suite written to the log, at most. */
const MAX_LOGGED_PROBLEMS = 50;
// Refuse a symbolic link as the file itself (the name has no "/": the only component that could be one).
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

/** A fixture as checked at start-up: what a signed link to it must say (shared/files/access.ts `FileLink`). */
interface SuiteFixture {
  name: string;
  /** `holon://evals/<capability>/<name>` */
  handle: string;
  /** Absolute path, inside the suite's fixtures directory. */
  file: string;
  size: number;
  sha256: string;
  contentType: string;
}

export interface LoadedSuite {
  capability: string;
  suite: Suite;
  /** From HOLON_PRIVATE_EVALS: its cases are shown only as passed or failed. */
  hidden: boolean;
  /** The suite.yaml it was read from. */
  file: string;
  /** `<capability>/files/` beside the suite file (its real path when it exists). */
  fixturesDir: string;
  /** The fixtures its cases name, by name. */
  fixtures: ReadonlyMap<string, SuiteFixture>;
}

export interface SuiteCatalog {
  /** Every usable suite, by capability. */
  readonly suites: ReadonlyMap<string, LoadedSuite>;
  get(capability: string): LoadedSuite | undefined;
  /** The suites of these capabilities, in their order, those without a suite left out. */
  forCapabilities(capabilities: readonly string[]): LoadedSuite[];
}

export type SuiteFileResult = { ok: true; suite: Suite; fixturesDir: string; fixtures: SuiteFixture[] } | { ok: false; problems: Problem[] };

export interface CheckSuiteOptions {
  /** The directory holding the suite file must be named like its capability (the `evals/<capability>/` layout). */
  directoryName: boolean;
}

// ---------------------------------------------------------------------------------------------
// One suite file
// ---------------------------------------------------------------------------------------------

/** A parsed suite document, `file` being where it was read: validated, its directory name and its fixtures checked. */
export async function checkSuite(doc: unknown, file: string, options: CheckSuiteOptions): Promise<SuiteFileResult> {
  const validated = validateSuite(doc);
  if (!validated.ok) return validated;
  const suite = validated.suite;
  const problems: Problem[] = [];
  const dir = path.dirname(path.resolve(file));
  if (options.directoryName && path.basename(dir) !== suite.capability) {
    problems.push({
      path: '$.capability',
      message: `"${suite.capability}" is not the name of the directory holding the suite ("${path.basename(dir)}"): suites live in <evals>/<capability>/${SUITE_FILE}`,
    });
  }
  const fixtures = await checkFixtures(suite, path.join(dir, FIXTURES_DIR), problems);
  if (problems.length) return { ok: false, problems: sortProblems(problems) };
  return { ok: true, suite, fixturesDir: fixtures.dir, fixtures: fixtures.found };
}

/** Read, parse and check one suite file. Never throws: an unreadable file is a problem like any other. */
async function readSuiteFile(file: string, options: CheckSuiteOptions): Promise<SuiteFileResult> {
  let text: string;
  try {
    const info = await stat(file);
    if (!info.isFile()) return { ok: false, problems: [{ path: '$', message: 'is not a file' }] };
    if (info.size > MAX_DOCUMENT_BYTES) return { ok: false, problems: [{ path: '$', message: `the document is larger than ${MAX_DOCUMENT_BYTES / 1024} KB` }] };
    text = await readFile(file, 'utf8');
  } catch (e) {
    return { ok: false, problems: [{ path: '$', message: `cannot read the file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` }] };
  }
  const format = /\.json$/i.test(file) ? 'json' : 'yaml';
  const parsed = parseDocumentText(text, format);
  if (!parsed.ok) return parsed;
  return checkSuite(parsed.value, file, options);
}

async function checkFixtures(suite: Suite, dir: string, problems: Problem[]): Promise<{ dir: string; found: SuiteFixture[] }> {
  const uses = suite.cases.map((c, i) => ({ i, names: caseFixtures(c) })).filter((u) => u.names.length > 0);
  if (uses.length === 0) return { dir: await realpath(dir).catch(() => dir), found: [] };
  let realDir: string;
  try {
    realDir = await realpath(dir);
    if (!(await stat(realDir)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
    for (const u of uses) {
      const named = u.names.map((n) => `"${n}"`).join(', ');
      problems.push({
        path: `$.cases[${u.i}].input`,
        message: `names the fixture${u.names.length === 1 ? '' : 's'} ${named}, but the suite's ${FIXTURES_DIR}/ directory (${dir}) ${why}`,
      });
    }
    return { dir, found: [] };
  }
  const found = new Map<string, SuiteFixture | string>();
  for (const u of uses) {
    for (const name of u.names) {
      let fixture = found.get(name);
      if (fixture === undefined) {
        fixture = await inspectFixture(suite.capability, realDir, name);
        found.set(name, fixture);
      }
      if (typeof fixture === 'string') problems.push({ path: `$.cases[${u.i}].input`, message: `fixture "${name}": ${fixture}` });
    }
  }
  return { dir: realDir, found: [...found.values()].filter((f): f is SuiteFixture => typeof f !== 'string') };
}

/** The fixture, or why it cannot be one. */
async function inspectFixture(capability: string, dir: string, name: string): Promise<SuiteFixture | string> {
  if (!isFixtureName(name)) return 'is not a plain file name'; // validateSuite refused it already
  const file = path.join(dir, name);
  let handle: FileHandle;
  try {
    handle = await open(file, OPEN_FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return `there is no file ${name} in ${dir}`;
    if (code === 'ELOOP') return `${file} is a symbolic link: fixtures must be regular files`;
    return `${file} cannot be read (${code ?? (e as Error).message})`;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return `${file} is not a regular file`;
    if (info.size > MAX_FIXTURE_BYTES) return `${file} is larger than ${MAX_FIXTURE_BYTES / 1024 / 1024} MB`;
    const hash = createHash('sha256');
    for await (const chunk of handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer);
    return { name, handle: `holon://evals/${capability}/${name}`, file, size: info.size, sha256: hash.digest('hex'), contentType: contentType(name) };
  } catch (e) {
    return `${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
  } finally {
    await handle.close().catch(() => {});
  }
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.html': 'text/html',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.zip': 'application/zip',
};

/** The media type of a fixture, from its extension; `application/octet-stream` when unknown. */
function contentType(name: string): string {
  return CONTENT_TYPES[path.extname(name).toLowerCase()] ?? 'application/octet-stream';
}

// ---------------------------------------------------------------------------------------------
// Every suite, at start-up
// ---------------------------------------------------------------------------------------------

/**
 * Read every `<dir>/<capability>/suite.yaml` of the public and the private directory. A private suite replaces the
 * public one of its capability, even when it is broken (then the capability has no suite: falling back to the public
 * samples would record results under a suite that is not the one the operator chose). Never throws.
 */
export async function loadSuites(dirs: SuiteDirs, log: Logger): Promise<SuiteCatalog> {
  const publicSuites = await loadDir(dirs.publicDir, false, log);
  const privateSuites = dirs.privateDir ? await loadDir(dirs.privateDir, true, log) : new Map<string, LoadedSuite | null>();
  const suites = new Map<string, LoadedSuite>();
  for (const [capability, loaded] of publicSuites) {
    if (privateSuites.has(capability)) continue;
    if (loaded) suites.set(capability, loaded);
  }
  for (const [capability, loaded] of privateSuites) {
    if (loaded) suites.set(capability, loaded);
    else if (publicSuites.get(capability)) {
      log.error({ capability }, 'the private evaluation suite is broken: the public one is not used in its place, the capability has no suite');
    }
  }
  const sorted = new Map([...suites.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  log.info(
    { suites: [...sorted.values()].map((s) => ({ capability: s.capability, version: s.suite.version, hidden: s.hidden })) },
    sorted.size ? 'evaluation suites loaded' : 'no evaluation suite loaded',
  );
  return catalog(sorted);
}

/** What results record of a suite: capability, version, hidden, number of cases, threshold as written. */
export function suiteSummary(loaded: LoadedSuite): { capability: string; version: number; hidden: boolean; cases: number; threshold: string } {
  return {
    capability: loaded.capability,
    version: loaded.suite.version,
    hidden: loaded.hidden,
    cases: loaded.suite.cases.length,
    threshold: loaded.suite.pass_threshold,
  };
}

/** A catalogue over given suites (tests, tools). */
function catalog(suites: ReadonlyMap<string, LoadedSuite>): SuiteCatalog {
  return {
    suites,
    get: (capability) => suites.get(capability),
    forCapabilities: (capabilities) => {
      const out: LoadedSuite[] = [];
      const seen = new Set<string>();
      for (const capability of capabilities) {
        const s = suites.get(capability);
        if (s && !seen.has(capability)) out.push(s);
        seen.add(capability);
      }
      return out;
    },
  };
}

/** capability → its suite, or null when the directory holds a broken one (logged). */
async function loadDir(dir: string, hidden: boolean, log: Logger): Promise<Map<string, LoadedSuite | null>> {
  const out = new Map<string, LoadedSuite | null>();
  const which = hidden ? 'private (HOLON_PRIVATE_EVALS)' : 'public (HOLON_EVALS)';
  let entries: Array<{ name: string; isDirectory(): boolean; isSymbolicLink(): boolean }>;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (hidden || code !== 'ENOENT') log.error({ dir, code }, `the ${which} evaluation suites directory cannot be read`);
    else log.warn({ dir }, `the ${which} evaluation suites directory does not exist: no public suite`);
    return out;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (!entry.isDirectory() && !entry.isSymbolicLink()) continue; // a README beside the suites
    if (entry.name.startsWith('.')) continue;
    const file = path.join(dir, entry.name, SUITE_FILE);
    if (!isCapabilityClass(entry.name)) {
      if (await exists(file)) {
        log.error(
          { file, problems: [{ path: '$', message: `the directory name "${entry.name}" is not a capability` }] },
          'evaluation suite skipped: it is invalid',
        );
      }
      continue;
    }
    if (!(await exists(file))) {
      if (entry.isDirectory()) log.warn({ dir: path.join(dir, entry.name) }, `no ${SUITE_FILE} in this evaluation suites directory`);
      continue;
    }
    try {
      const r = await readSuiteFile(file, { directoryName: true });
      if (!r.ok) {
        log.error(
          {
            file,
            problems: r.problems.slice(0, MAX_LOGGED_PROBLEMS),
            ...(r.problems.length > MAX_LOGGED_PROBLEMS ? { more: r.problems.length - MAX_LOGGED_PROBLEMS } : {}),
          },
          'evaluation suite skipped: it is invalid',
        );
        out.set(entry.name, null);
        continue;
      }
      out.set(entry.name, {
        capability: r.suite.capability,
        suite: r.suite,
        hidden,
        file,
        fixturesDir: r.fixturesDir,
        fixtures: new Map(r.fixtures.map((f) => [f.name, f])),
      });
      log.debug({ file, capability: r.suite.capability, version: r.suite.version, cases: r.suite.cases.length, hidden }, 'evaluation suite read');
    } catch (e) {
      // Not expected (readSuiteFile reports problems), but start-up never fails on a suite.
      log.error({ file, err: (e as Error).message }, 'evaluation suite skipped: it could not be read');
      out.set(entry.name, null);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Fixtures for the evaluator
// ---------------------------------------------------------------------------------------------

export interface OpenedFixture {
  fixture: SuiteFixture;
  stream: ReadStream;
}

/**
 * A fixture's bytes as a stream, for a name the suite's cases use (any other name: null, whatever it is). Opened
 * inside the fixtures directory, refusing a symbolic link; null too when the file is gone, is no longer a regular
 * file, or changed size since start-up. The stream closes the file when it ends or is destroyed.
 */
export async function openFixture(loaded: LoadedSuite, name: string): Promise<OpenedFixture | null> {
  const fixture = loaded.fixtures.get(name);
  if (!fixture || !isFixtureName(name)) return null;
  const file = path.join(loaded.fixturesDir, name);
  if (path.dirname(file) !== loaded.fixturesDir) return null;
  let handle: FileHandle;
  try {
    handle = await open(file, OPEN_FLAGS);
  } catch {
    return null;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size !== fixture.size) {
      await handle.close();
      return null;
    }
  } catch {
    await handle.close().catch(() => {});
    return null;
  }
  return { fixture, stream: handle.createReadStream() };
}

/** A fixture's bytes, all at once (openFixture's rules). */
export async function readFixture(loaded: LoadedSuite, name: string): Promise<Buffer | null> {
  const opened = await openFixture(loaded, name);
  if (!opened) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of opened.stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
