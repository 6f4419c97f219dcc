/**
 * The registry: every listed agent version, looked up by id, by ref (`ns/name[@range]`, gateway.md §1.1)
 * or by capability. This is the read-only interface the gateway uses, plus an in-memory implementation
 * (the dev registry fills it from holon.yaml files; see dev-registry.ts).
 *
 * "Latest" follows the resolution rule of shared/core/resolution.ts: the highest *release* (a pre-release is
 * only ever chosen when a range names one). So:
 *   - `resolve('ns/name')` never lands on a pre-release; `resolve('ns/name@1.0.0-beta.1')` can;
 *   - `implementers(cap)` gives, per agent id, the highest release that lists the capability (agents that
 *     list it only in pre-releases are left out: a capability call never picks a pre-release);
 *   - `search()` is for discovery, so an agent that only has pre-releases still shows up, with its highest
 *     pre-release.
 */
import semver from 'semver';
import { parseAgentRef, resolveVersion } from '../core/resolution.js';
import { matchesCapability } from '../core/mandate/patterns.js';
import type { AgentVersion } from './agent-version.js';

type ResolveErrorCode = 'unknown_agent' | 'no_matching_version' | 'invalid_ref';

type ResolveResult = { ok: true; agent: AgentVersion } | { ok: false; code: ResolveErrorCode; message: string };

interface SearchQuery {
  /**
   * Case-insensitive substring of the id, the summary or one of the capabilities. Blank: no filter. The catalogue's
   * search (GET /v0/agents?q=, MCP search_agents) does not use it: it is full-text (shared/catalogue/text-search.ts).
   */
  q?: string;
  /** An exact capability class, or a `prefix.*` pattern (mandate pattern syntax). */
  capability?: string;
}

export interface Registry {
  /** One exact version, or undefined. */
  get(id: string, version: string): AgentVersion | undefined;
  /** Every listed version of an agent, newest first (semver order); [] for an unknown id. */
  versions(id: string): AgentVersion[];
  /** `ns/name[@range]` → the highest listed version in range (gateway.md §1.1). */
  resolve(ref: string): ResolveResult;
  /** Per agent id, the highest release listing `capability` (exact class); sorted by id. */
  implementers(capability: string): AgentVersion[];
  /** Every listed version, sorted by id, then newest first. */
  list(): AgentVersion[];
  /** Matching agents, one version each (the latest matching one), sorted by id. */
  search(query?: SearchQuery): AgentVersion[];
  /**
   * Stop listing one version (a yank, gateway.md §7 Moderation): it leaves resolution, capability routing,
   * search, `list()` and `versions()`. `get()` still finds it: calls admitted before the yank run and settle,
   * and forks of it still pay their royalties. False when it is not listed (unknown, or hidden already).
   */
  hide(id: string, version: string): boolean;
  /**
   * List one more version (a publish, heard by every process). False when this `id@version` was ever given —
   * listed or hidden: a version number is never reused, and a yanked one stays yanked.
   */
  add(agent: AgentVersion): boolean;
}

/** Newest first; versions the manifest validator accepted are always valid semver. */
function compareNewestFirst(a: AgentVersion, b: AgentVersion): number {
  const va = a.manifest.version;
  const vb = b.manifest.version;
  if (semver.valid(va) && semver.valid(vb)) {
    const c = semver.rcompare(va, vb);
    if (c !== 0) return c;
  }
  return va < vb ? 1 : va > vb ? -1 : 0;
}

/** The highest release of `list` (sorted newest first), or null when it only holds pre-releases. */
function latestRelease(list: readonly AgentVersion[]): AgentVersion | null {
  const v = resolveVersion(list.map((a) => a.manifest.version));
  return v === null ? null : (list.find((a) => a.manifest.version === v) ?? null);
}

/** What an in-memory registry holds. */
interface Listing {
  /** Every version ever given, hidden ones included: `get()` reads this. */
  all: Map<string, AgentVersion[]>;
  /** The listed versions, newest first; an id whose versions are all hidden is removed (and from `ids`). */
  byId: Map<string, AgentVersion[]>;
  /** The listed ids, sorted. */
  ids: string[];
  /**
   * Per listed id, the version `search()` shows without a capability (its newest release, else its newest
   * pre-release), kept until that id's versions change: a search is not a semver resolution per listed agent.
   */
  shown: Map<string, AgentVersion>;
  /**
   * Per listed id, the version each range resolved to (`''`: no range), kept until that id's versions change: a
   * call is not a semver resolution. At most RESOLVED_PER_ID ranges an id (then the id's are forgotten).
   */
  resolved: Map<string, Map<string, AgentVersion>>;
}

const RESOLVED_PER_ID = 64;

/** The versions given at the start, by id, newest first; throws on an `id@version` given twice. */
function listingOf(versions: readonly AgentVersion[]): Listing {
  const all = new Map<string, AgentVersion[]>();
  const byId = new Map<string, AgentVersion[]>();
  for (const agent of versions) {
    const { id, version } = agent.manifest;
    const list = byId.get(id) ?? [];
    if (list.some((a) => a.manifest.version === version)) {
      throw new Error(`duplicate agent version ${id}@${version}`);
    }
    list.push(agent);
    byId.set(id, list);
  }
  for (const list of byId.values()) list.sort(compareNewestFirst);
  for (const [id, list] of byId) all.set(id, [...list]);
  return { all, byId, ids: [...byId.keys()].sort(), shown: new Map(), resolved: new Map() };
}

function resolveIn({ byId, resolved }: Listing, ref: string): ResolveResult {
  const parsed = parseAgentRef(ref);
  if (!parsed) {
    return {
      ok: false,
      code: 'invalid_ref',
      message: `"${ref.length > 80 ? `${ref.slice(0, 80)}…` : ref}" is not an agent reference: expected "<namespace>/<name>" or "<namespace>/<name>@<semver range>"`,
    };
  }
  const known = resolved.get(parsed.id)?.get(parsed.range ?? '');
  if (known) return { ok: true, agent: known };
  const list = byId.get(parsed.id);
  if (!list || list.length === 0) {
    return { ok: false, code: 'unknown_agent', message: `no agent ${parsed.id} is listed` };
  }
  const version = resolveVersion(
    list.map((a) => a.manifest.version),
    parsed.range,
  );
  const agent = version === null ? undefined : list.find((a) => a.manifest.version === version);
  if (!agent) {
    const listed = list.map((a) => a.manifest.version).join(', ');
    const what = parsed.range === undefined ? 'no released version' : `no version matching "${parsed.range}"`;
    return { ok: false, code: 'no_matching_version', message: `${parsed.id} has ${what} (listed: ${listed})` };
  }
  const ranges = resolved.get(parsed.id) ?? new Map<string, AgentVersion>();
  if (ranges.size >= RESOLVED_PER_ID) ranges.clear();
  ranges.set(parsed.range ?? '', agent);
  resolved.set(parsed.id, ranges);
  return { ok: true, agent };
}

/** Newest release, else (pre-release-only agents stay discoverable) the newest pre-release. */
const shownOf = (candidates: readonly AgentVersion[]): AgentVersion => latestRelease(candidates) ?? candidates[0]!;

function searchIn({ byId, ids, shown }: Listing, query: SearchQuery): AgentVersion[] {
  const q = query.q?.trim().toLowerCase() ?? '';
  const cap = query.capability?.trim() ?? '';
  const out: AgentVersion[] = [];
  for (const id of ids) {
    let agent: AgentVersion;
    if (cap === '') {
      agent = shown.get(id) ?? shownOf(byId.get(id)!);
      shown.set(id, agent);
    } else {
      const candidates = byId.get(id)!.filter((a) => a.manifest.capabilities.some((c) => c === cap || matchesCapability(cap, c)));
      if (candidates.length === 0) continue;
      agent = shownOf(candidates);
    }
    if (q !== '' && !matchesText(agent, q)) continue;
    out.push(agent);
  }
  return out;
}

/** List one more version (`get()` found none with its id and version). */
function addTo({ all, byId, ids, shown, resolved }: Listing, agent: AgentVersion): void {
  const { id } = agent.manifest;
  shown.delete(id);
  resolved.delete(id);
  all.set(id, [...(all.get(id) ?? []), agent]);
  const list = byId.get(id) ?? [];
  list.push(agent);
  list.sort(compareNewestFirst);
  if (!byId.has(id)) {
    byId.set(id, list);
    ids.push(id);
    ids.sort();
  }
}

function hideIn({ byId, ids, shown, resolved }: Listing, id: string, version: string): boolean {
  const list = byId.get(id);
  const at = list ? list.findIndex((a) => a.manifest.version === version) : -1;
  if (!list || at < 0) return false;
  shown.delete(id);
  resolved.delete(id);
  list.splice(at, 1);
  if (list.length === 0) {
    byId.delete(id);
    ids.splice(ids.indexOf(id), 1);
  }
  return true;
}

/**
 * An in-memory registry; it changes only by `hide()` (yanks) and `add()` (publishes). Throws when the same `id@version` is given twice: the
 * caller decides which one wins (the dev registry keeps the first and reports the second).
 */
export function createRegistry(versions: readonly AgentVersion[]): Registry {
  const listing = listingOf(versions);
  const { all, byId, ids } = listing;

  const registry: Registry = {
    get(id, version) {
      return all.get(id)?.find((a) => a.manifest.version === version);
    },

    versions(id) {
      return [...(byId.get(id) ?? [])];
    },

    resolve(ref) {
      return resolveIn(listing, ref);
    },

    implementers(capability) {
      const out: AgentVersion[] = [];
      for (const id of ids) {
        const listed = byId.get(id)!.filter((a) => a.manifest.capabilities.includes(capability));
        const best = latestRelease(listed);
        if (best) out.push(best);
      }
      return out;
    },

    list() {
      return ids.flatMap((id) => byId.get(id)!);
    },

    search(query = {}) {
      return searchIn(listing, query);
    },

    add(agent) {
      if (registry.get(agent.manifest.id, agent.manifest.version)) return false;
      addTo(listing, agent);
      return true;
    },

    hide(id, version) {
      return hideIn(listing, id, version);
    },
  };
  return registry;
}

function matchesText(agent: AgentVersion, q: string): boolean {
  const m = agent.manifest;
  return m.id.toLowerCase().includes(q) || m.summary.toLowerCase().includes(q) || m.capabilities.some((c) => c.toLowerCase().includes(q));
}
