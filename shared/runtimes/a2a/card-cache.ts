/**
 * The cards of unpublished (dev, file) a2a agents, fetched at call time and kept per process for a short time, so
 * that a burst of calls does not fetch the card each time. Only cards that were read are kept; a failure is not.
 * Published versions never come here: they run on the card kept when they were published.
 */
const DEFAULT_TTL_MS = 30_000;
/** Beyond this many entries the oldest are dropped. */
const MAX_ENTRIES = 1_000;

export class CardCache {
  private readonly entries = new Map<string, { json: unknown; expires: number }>();

  constructor(private readonly ttlMs = DEFAULT_TTL_MS) {}

  get(key: string): unknown {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.json;
  }

  set(key: string, json: unknown): void {
    this.entries.delete(key);
    this.entries.set(key, { json, expires: Date.now() + this.ttlMs });
    while (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }
}
