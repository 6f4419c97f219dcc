/**
 * Lineage and fork rules (spec/manifest.md §8).
 */
import { compareRates, formatRate, ONE_RATE, tryParseRate, type Rate } from '../../money.js';
import { isAgentId, isExactVersion, section, type Report } from './util.js';
import type { JsonObject } from '../../json.js';

/** A chain is at most this many levels long, counting every agent in it (level 0 is the agent called). */
const MAX_LINEAGE_LEVELS = 8;
const ROYALTY_DECIMALS = 4;

/** What the registry knows about a listed upstream version. */
export interface UpstreamInfo {
  forks: { minRoyalty: Rate; allowed: boolean };
  /**
   * Levels in the upstream's own chain, counting the upstream itself: 1 when it is not a fork,
   * 2 when it forks a non-fork, … Defaults to 1 + chain.length.
   */
  lineageDepth?: number;
  /** Ids (`ns/name`, `@version` allowed) of the upstream's own ancestors, nearest first, not the upstream itself. */
  chain?: string[];
}

export type ResolveUpstream = (id: string, version: string) => UpstreamInfo | null;

export function parseRoyalty(value: unknown) {
  return tryParseRate(value, { maxDecimals: ROYALTY_DECIMALS, below: ONE_RATE });
}

/** `<ns>/<name>@<exact version>`, or null. */
export function parseForkedFrom(value: string): { id: string; version: string } | null {
  const at = value.indexOf('@');
  if (at < 0) return null;
  const id = value.slice(0, at);
  const version = value.slice(at + 1);
  return isAgentId(id) && isExactVersion(version) ? { id, version } : null;
}

export function checkLineage(doc: JsonObject, report: Report, resolveUpstream?: ResolveUpstream): void {
  const forks = section(doc, 'forks');
  if (forks && forks.min_royalty !== undefined) {
    const r = parseRoyalty(forks.min_royalty);
    if (!r.ok) report('$.forks.min_royalty', r.message);
  }

  const lineage = section(doc, 'lineage');
  if (!lineage) return;
  let royalty: Rate | undefined;
  if (lineage.royalty !== undefined) {
    const r = parseRoyalty(lineage.royalty);
    if (r.ok) royalty = r.value;
    else report('$.lineage.royalty', r.message);
  }

  if (typeof lineage.forked_from !== 'string') return;
  const upstream = parseForkedFrom(lineage.forked_from);
  if (!upstream) {
    report('$.lineage.forked_from', 'must be "<namespace>/<name>@<exact version>", such as "acme/pdf-tables@2.0.1"');
    return;
  }
  const ref = `${upstream.id}@${upstream.version}`;
  if (upstream.id === doc.id) {
    report('$.lineage.forked_from', 'an agent cannot be a fork of itself');
    return;
  }
  if (!resolveUpstream) return;

  const info = resolveUpstream(upstream.id, upstream.version);
  if (!info) {
    report('$.lineage.forked_from', `${ref} is not a listed agent version`);
    return;
  }
  if (info.forks.allowed === false) report('$.lineage.forked_from', `${ref} does not allow forks (forks.allowed is false)`);
  if (royalty && compareRates(royalty, info.forks.minRoyalty) < 0) {
    report(
      '$.lineage.royalty',
      `${formatRate(royalty)} is below the ${formatRate(info.forks.minRoyalty)} that ${ref} requires of its forks (forks.min_royalty)`,
    );
  }
  const chain = (info.chain ?? []).map((c) => c.split('@')[0]);
  if (typeof doc.id === 'string' && chain.includes(doc.id)) {
    report('$.lineage.forked_from', `the fork chain would loop: ${doc.id} is already upstream of ${ref}`);
  }
  const depth = info.lineageDepth ?? 1;
  if (!Number.isSafeInteger(depth) || depth < 1) {
    report('$.lineage.forked_from', `the fork chain of ${ref} could not be determined`);
    return;
  }
  const levels = 1 + Math.max(depth, 1 + chain.length);
  if (levels > MAX_LINEAGE_LEVELS) {
    report('$.lineage.forked_from', `the fork chain would be ${levels} levels long; at most ${MAX_LINEAGE_LEVELS} are allowed`);
  }
}
