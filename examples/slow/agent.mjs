// examples/slow: waits input.ms milliseconds, and stops as soon as ctx.signal fires (timeout, cancellation).
export default async function run(input, ctx) {
  await sleep(input.ms, ctx.signal);
  return { waited: input.ms };
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortReason(signal) {
  return signal.reason instanceof Error ? signal.reason : new DOMException('The wait was aborted', 'AbortError');
}
