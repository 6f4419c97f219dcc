/**
 * Group commit (docs/PERFORMANCE.md): work items that arrive while a batch is in flight wait for it, then go
 * together in the next one (at most `maxBatch`, in arrival order); an item that arrives when nothing is in flight
 * goes at once, alone — so an idle gateway adds no latency and a busy one sends one statement for many items.
 *
 * `batch` answers each item's result in the items' order. When it throws, the batch's items are given to `one`, each
 * on its own (one bad item fails only itself); without `one`, they all fail with the batch's error.
 */
export interface GroupCommitOptions<I, O> {
  maxBatch: number;
  batch(items: readonly I[]): Promise<readonly O[]>;
  one?(item: I): Promise<O>;
  /** Told when a batch failed and its items go one by one. */
  onBatchError?(err: unknown, size: number): void;
}

interface Waiting<I, O> {
  item: I;
  resolve(r: O): void;
  reject(e: unknown): void;
}

export function groupCommit<I, O>(options: GroupCommitOptions<I, O>): (item: I) => Promise<O> {
  let waiting: Array<Waiting<I, O>> = [];
  let inFlight = false;

  const flush = async (): Promise<void> => {
    inFlight = true;
    while (waiting.length > 0) {
      const items = waiting.slice(0, options.maxBatch);
      waiting = waiting.slice(items.length);
      let results: readonly O[] | undefined;
      let failure: unknown;
      try {
        results = await options.batch(items.map((w) => w.item));
        if (results.length !== items.length) throw new Error(`a batch of ${items.length} answered ${results.length} results`);
      } catch (err) {
        results = undefined;
        failure = err;
        options.onBatchError?.(err, items.length);
      }
      items.forEach((w, i) => {
        if (results) w.resolve(results[i]!);
        else if (options.one) options.one(w.item).then(w.resolve, w.reject);
        else w.reject(failure);
      });
    }
    inFlight = false;
  };

  return (item) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (!inFlight) void flush();
    });
}
