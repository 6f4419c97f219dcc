/**
 * Bounded concurrency per agent endpoint (spec/evals.md: authors' servers are not a load test): at most `limit` cases
 * run at once against one endpoint origin in this evaluator process, whatever suites and versions they belong to.
 * Several evaluator processes each keep their own bound.
 */
export interface EndpointLimit {
  run<T>(endpoint: string, work: () => Promise<T>): Promise<T>;
}

export function createEndpointLimit(limit: number): EndpointLimit {
  const active = new Map<string, number>();
  const waiting = new Map<string, Array<() => void>>();
  const release = (key: string): void => {
    const next = waiting.get(key)?.shift();
    if (next) {
      next(); // the slot passes to the next case as it is
      return;
    }
    const n = (active.get(key) ?? 1) - 1;
    if (n <= 0) active.delete(key);
    else active.set(key, n);
    if (waiting.get(key)?.length === 0) waiting.delete(key);
  };
  return {
    async run(endpoint, work) {
      const key = endpointKey(endpoint);
      if ((active.get(key) ?? 0) >= limit) {
        await new Promise<void>((resolve) => waiting.set(key, [...(waiting.get(key) ?? []), resolve]));
      } else {
        active.set(key, (active.get(key) ?? 0) + 1);
      }
      try {
        return await work();
      } finally {
        release(key);
      }
    },
  };
}

/** One bucket per origin (scheme, host, port): two tools on one server share it. */
function endpointKey(endpoint: string): string {
  try {
    return new URL(endpoint).origin;
  } catch {
    return endpoint;
  }
}
