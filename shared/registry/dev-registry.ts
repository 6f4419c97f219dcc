/**
 * The dev registry (gateway.md §6, Dev runtime): every `holon.yaml` (or `holon.json`) found under some
 * directories, validated like any manifest. Every agent it lists is `origin: 'shipped'`.
 *
 * A file that cannot be listed (unreadable, invalid manifest, `runtime.kind: node` without `agent.mjs`
 * beside it, an `id@version` already loaded from an earlier file) is reported in `problems` and logged as a
 * warning, and skipped whole: an agent is never half-loaded. Loading itself never fails, a missing
 * directory is a problem too.
 *
 * The walk is deterministic: directories in the order given, then depth-first with entries sorted by name,
 * a directory's own manifest files before its subdirectories. "The second of two duplicates" is the later
 * one in that order. `node_modules` and dot-directories are skipped; symbolic links to directories are
 * followed once (a link back up the tree is not walked twice).
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Problem } from '../core/errors.js';
import { isJsonObject } from '../core/json.js';
import { createLogger, type Logger } from '../platform/log.js';
import { manifestFile } from './manifest-files.js';
import type { AgentVersion } from './agent-version.js';
import { createRegistry, type Registry } from './registry.js';
import { onAgentHostPort, type AgentHostPort } from './agent-host.js';

const MANIFEST_FILE_NAMES = ['holon.yaml', 'holon.json'] as const;
/** The dev runtime's entry point, next to the manifest of a `runtime.kind: node` agent. */
const NODE_ENTRY_FILE = 'agent.mjs';
/**
 * Shipped agents paused until the operator sets what they cannot work without (gateway.md §7): beside HOLON_EXCLUDE,
 * the one other reason a manifest found is left out. holon-labs/sec-company needs the contact email EDGAR asks for.
 */
const LISTED_ONLY_WITH: Readonly<Record<string, string>> = { 'holon-labs/sec-company': 'HOLON_SEC_CONTACT' };

export interface FileProblems {
  file: string;
  problems: Problem[];
}

export interface LoadDevRegistryOptions {
  /** Agent ids (`ns/name`, every version) or exact `ns/name@version` to leave out, silently. */
  exclude?: string[];
  /** The settings LISTED_ONLY_WITH reads, by variable name (the gateway passes its config's; default none set). */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * The reference MCP agent host (agents/host.mjs) on another port than the one the shipped manifests name
   * (HOLON_AGENT_HOST_PORT): agents under `dir` whose endpoint is that host's default are called on `port` instead.
   */
  agentHost?: AgentHostPort;
  /** Defaults to a `registry` logger at info level. */
  log?: Logger;
}

export interface DevRegistry {
  registry: Registry;
  problems: FileProblems[];
}

export async function loadDevRegistry(dirs: string[], options: LoadDevRegistryOptions = {}): Promise<DevRegistry> {
  const log = options.log ?? createLogger('registry');
  const exclude = new Set(options.exclude ?? []);
  const env = options.env ?? {};
  const problems: FileProblems[] = [];
  const report = (file: string, list: Problem[]): void => {
    problems.push({ file, problems: list });
    log.warn({ file, problems: list }, `skipped ${file}: ${list.map((p) => `${p.path} ${p.message}`).join('; ')}`);
  };

  const files: string[] = [];
  const visited = new Set<string>();
  for (const dir of dirs) await walk(dir, files, visited, report);

  const loaded = new Map<string, { agent: AgentVersion; file: string }>();
  let excluded = 0;
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      report(file, [{ path: '$', message: `cannot read the file: ${errorCode(e)}` }]);
      continue;
    }
    // Parsed and validated once per process for these exact bytes (manifest-files.ts).
    const checked = manifestFile(file, text);
    const { doc } = checked;
    if (!doc.ok) {
      report(file, doc.problems);
      continue;
    }
    // Excluded before validation: excluding an agent is also how to silence a broken one.
    if (isExcluded(doc.value, exclude)) {
      excluded += 1;
      continue;
    }
    const missing = missingSetting(doc.value, env);
    if (missing !== undefined) {
      log.info({ file, setting: missing }, `${file} is not listed until ${missing} is set`);
      continue;
    }
    // Parsing + validateManifest is exactly parseManifest, split to peek at the id.
    const result = checked.validated();
    if (!result.ok) {
      report(file, result.problems);
      continue;
    }
    const manifest = result.manifest;
    const key = `${manifest.id}@${manifest.version}`;
    const dir = resolve(dirname(file));
    if (manifest.runtime.kind === 'node' && !(await isFile(join(dir, NODE_ENTRY_FILE)))) {
      report(file, [
        {
          path: '$.runtime.kind',
          message: `${key} has runtime.kind node but there is no ${NODE_ENTRY_FILE} next to ${basename(file)}`,
        },
      ]);
      continue;
    }
    const first = loaded.get(key);
    if (first) {
      report(file, [{ path: '$.version', message: `${key} is already listed, from ${first.file}` }]);
      continue;
    }
    loaded.set(key, { agent: { manifest: options.agentHost ? onAgentHostPort(manifest, dir, options.agentHost) : manifest, dir, origin: 'shipped' }, file });
  }

  if (excluded > 0) log.debug({ excluded }, `excluded ${excluded} manifest file(s)`);
  log.info({ agents: loaded.size, problems: problems.length }, `dev registry: ${loaded.size} agent version(s) listed`);
  return { registry: createRegistry([...loaded.values()].map((l) => l.agent)), problems };
}

function isExcluded(doc: unknown, exclude: ReadonlySet<string>): boolean {
  if (exclude.size === 0 || !doc || typeof doc !== 'object') return false;
  // Any parsed document: only the two fields that name it are read, each checked.
  const { id, version } = doc as { id?: unknown; version?: unknown };
  if (typeof id !== 'string') return false;
  return exclude.has(id) || (typeof version === 'string' && exclude.has(`${id}@${version}`));
}

/** The setting LISTED_ONLY_WITH names for this document's agent, when it is not set; undefined otherwise. */
function missingSetting(doc: unknown, env: Readonly<Record<string, string | undefined>>): string | undefined {
  const id = isJsonObject(doc) ? doc.id : undefined;
  const setting = typeof id === 'string' && Object.hasOwn(LISTED_ONLY_WITH, id) ? LISTED_ONLY_WITH[id] : undefined;
  return setting !== undefined && !env[setting]?.trim() ? setting : undefined;
}

async function walk(dir: string, files: string[], visited: Set<string>, report: (file: string, problems: Problem[]) => void): Promise<void> {
  let real: string;
  let entries: Dirent[];
  try {
    real = await realpath(dir);
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    const code = errorCode(e);
    const message = code === 'ENOENT' ? 'the directory does not exist' : code === 'ENOTDIR' ? 'is not a directory' : `cannot read the directory: ${code}`;
    report(dir, [{ path: '$', message }]);
    return;
  }
  if (visited.has(real)) return;
  visited.add(real);

  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const subdirs: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    let isDir = entry.isDirectory();
    let isRegular = entry.isFile();
    if (entry.isSymbolicLink()) {
      const s = await stat(path).catch(() => null); // a dangling link is simply not a file
      isDir = s?.isDirectory() ?? false;
      isRegular = s?.isFile() ?? false;
    }
    if (isDir) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      subdirs.push(path);
    } else if (isRegular && (MANIFEST_FILE_NAMES as readonly string[]).includes(entry.name)) {
      files.push(path);
    }
  }
  for (const sub of subdirs) await walk(sub, files, visited, report);
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function errorCode(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
}
