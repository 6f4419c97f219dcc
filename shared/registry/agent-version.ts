/** One listed version of an agent, as the registry holds it. */
import type { Manifest } from '../core/manifest/types.js';

export interface AgentVersion {
  manifest: Manifest;
  /** Directory holding holon.yaml (dev registry). */
  dir?: string;
  /** Shipped with the gateway (always eligible) or published by a third party. */
  origin: 'shipped' | 'published';
}
