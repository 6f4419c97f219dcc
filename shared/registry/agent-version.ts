/** One listed version of an agent, as the registry holds it. */
import type { Manifest } from '../core/manifest/types.js';

export interface AgentVersion {
  manifest: Manifest;
  /** Directory holding holon.yaml (dev registry). */
  dir?: string;
  /** Shipped with the gateway (always eligible) or published by a third party. */
  origin: 'shipped' | 'published';
  /**
   * An a2a agent's card as fetched and checked when the version was published (`published_versions.a2a_card`): the
   * runtime uses it, not the card served now. Absent for other kinds and for unpublished agents.
   */
  a2aCard?: unknown;
}

/** `ns/name@version`: how a version travels on the notifier (ids and versions never contain '@' or whitespace). */
const VERSION_MESSAGE = /^([^\s@/]+\/[^\s@/]+)@([^\s@]+)$/;

export function versionMessage(id: string, version: string): string {
  return `${id}@${version}`;
}

export function parseVersionMessage(message: string): { id: string; version: string } | null {
  if (typeof message !== 'string' || message.length > 300) return null;
  const m = VERSION_MESSAGE.exec(message);
  return m ? { id: m[1]!, version: m[2]! } : null;
}
