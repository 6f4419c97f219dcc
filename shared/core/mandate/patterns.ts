/**
 * Capability and agent patterns of a mandate (spec/mandate.md §2), their matching, and coverage
 * (does one pattern match everything another matches?) used by attenuation (§5).
 *
 * Capability patterns: an exact class (`text.summarize`) or `prefix.*`. Decided here: `extraction.*`
 * matches every class strictly below `extraction` (`extraction.table`, `extraction.table.fr`) but NOT
 * the class `extraction` itself — the star stands for at least one more segment. A bare `*` is invalid.
 *
 * Agent patterns: `ns/name` (every version, pre-releases included), `ns/*` (every agent of the
 * namespace, every version), `ns/name@<semver range>` (versions satisfying the range, pre-releases
 * excluded as semver does by default). `ns/*@range` and `*` alone are invalid.
 */
import semver from 'semver';

import { CAPABILITY_CLASS, isAgentId, isHandle } from '../identifiers.js';

export { isAgentId, isHandle };
/** The longest pattern accepted (a semver range is never longer than this in practice). */
const MAX_PATTERN_LENGTH = 200;

const SEMVER_OPTIONS = { includePrerelease: false } as const;

// ---------------------------------------------------------------- capabilities

type CapabilityPattern = { kind: 'exact'; cls: string } | { kind: 'prefix'; prefix: string };

function parseCapabilityPattern(pattern: string): CapabilityPattern | null {
  if (pattern.length > MAX_PATTERN_LENGTH) return null;
  if (pattern.endsWith('.*')) {
    const prefix = pattern.slice(0, -2);
    return CAPABILITY_CLASS.test(prefix) ? { kind: 'prefix', prefix } : null;
  }
  return CAPABILITY_CLASS.test(pattern) ? { kind: 'exact', cls: pattern } : null;
}

/** Why a capability pattern is invalid, or null when it is valid. */
export function capabilityPatternProblem(pattern: string): string | null {
  if (parseCapabilityPattern(pattern)) return null;
  if (pattern.length > MAX_PATTERN_LENGTH) return `is longer than ${MAX_PATTERN_LENGTH} characters`;
  if (pattern === '*') return '"*" alone is not a pattern: name a class or a "prefix.*"';
  return `"${short(pattern)}" is not a capability pattern: an exact class such as "text.summarize" or "prefix.*" such as "extraction.*"`;
}

export function matchesCapability(pattern: string, cls: string): boolean {
  const p = parseCapabilityPattern(pattern);
  if (!p || !CAPABILITY_CLASS.test(cls)) return false;
  return p.kind === 'exact' ? p.cls === cls : cls.startsWith(`${p.prefix}.`);
}

function capabilityCovers(parent: CapabilityPattern, child: CapabilityPattern): boolean {
  if (parent.kind === 'exact') return child.kind === 'exact' && child.cls === parent.cls;
  const below = (s: string) => s.startsWith(`${parent.prefix}.`);
  return child.kind === 'exact' ? below(child.cls) : child.prefix === parent.prefix || below(child.prefix);
}

// ---------------------------------------------------------------- agents

interface AgentPattern {
  ns: string;
  /** `*` for every agent of the namespace. */
  name: string;
  range?: string;
}

function parseAgentPattern(pattern: string): AgentPattern | null {
  if (pattern.length > MAX_PATTERN_LENGTH) return null;
  const at = pattern.indexOf('@');
  const idPart = at < 0 ? pattern : pattern.slice(0, at);
  const range = at < 0 ? undefined : pattern.slice(at + 1);
  const slash = idPart.indexOf('/');
  if (slash < 0) return null;
  const ns = idPart.slice(0, slash);
  const name = idPart.slice(slash + 1);
  if (!isHandle(ns) || !(name === '*' || isHandle(name))) return null;
  if (range === undefined) return { ns, name };
  if (name === '*' || !validRange(range)) return null;
  return { ns, name, range };
}

function validRange(range: string): boolean {
  // semver reads "" and " " as "*": insist on a written range without surrounding spaces.
  if (range.trim() === '' || range !== range.trim()) return false;
  try {
    return semver.validRange(range) !== null;
  } catch {
    return false;
  }
}

/** Why an agent pattern is invalid, or null when it is valid. */
export function agentPatternProblem(pattern: string): string | null {
  if (parseAgentPattern(pattern)) return null;
  if (pattern.length > MAX_PATTERN_LENGTH) return `is longer than ${MAX_PATTERN_LENGTH} characters`;
  if (pattern === '*' || pattern === '*/*') return `"${pattern}" is not a pattern: name a namespace, as in "ns/*"`;
  const at = pattern.indexOf('@');
  if (at >= 0 && parseAgentPattern(pattern.slice(0, at))) {
    return pattern.slice(0, at).endsWith('/*')
      ? `"${short(pattern)}": a version range needs one agent, not "ns/*"`
      : `"${short(pattern)}" has an invalid semver range "${short(pattern.slice(at + 1))}"`;
  }
  return `"${short(pattern)}" is not an agent pattern: "ns/name", "ns/*" or "ns/name@<semver range>"`;
}

/** Does the agent pattern match agent `id` at `version`? */
export function matchesAgent(pattern: string, id: string, version: string): boolean {
  const p = parseAgentPattern(pattern);
  if (!p) return false;
  const sameAgent = p.name === '*' ? id.startsWith(`${p.ns}/`) : id === `${p.ns}/${p.name}`;
  if (!sameAgent) return false;
  if (p.range === undefined) return true;
  try {
    return semver.satisfies(version, p.range, SEMVER_OPTIONS);
  } catch {
    return false;
  }
}

function agentCovers(parent: AgentPattern, child: AgentPattern): boolean {
  if (parent.ns !== child.ns) return false;
  if (parent.name === '*') return true;
  if (child.name !== parent.name) return false;
  if (parent.range === undefined) return true;
  // A child without a range matches every version, pre-releases included: no range covers that.
  if (child.range === undefined) return false;
  try {
    return semver.subset(child.range, parent.range, SEMVER_OPTIONS);
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------- coverage

/**
 * Does every capability/agent that `child` matches also match `parent`? Agent patterns contain a '/',
 * capability patterns never do; patterns of different kinds, and invalid patterns, never cover.
 */
export function patternCovers(parent: string, child: string): boolean {
  const agent = parent.includes('/');
  if (agent !== child.includes('/')) return false;
  if (!agent) {
    const p = parseCapabilityPattern(parent);
    const c = parseCapabilityPattern(child);
    return p !== null && c !== null && capabilityCovers(p, c);
  }
  const p = parseAgentPattern(parent);
  const c = parseAgentPattern(child);
  return p !== null && c !== null && agentCovers(p, c);
}

/** The first of `parents` that covers `child`, or undefined. */
export function coveringPattern(parents: readonly string[], child: string): string | undefined {
  return parents.find((p) => patternCovers(p, child));
}

function short(s: string): string {
  return s.length > 60 ? `${s.slice(0, 60)}…` : s;
}
