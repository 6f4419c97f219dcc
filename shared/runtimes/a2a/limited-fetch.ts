/**
 * A fetch whose answers are read within a size limit: past it, reading the body fails with AnswerTooLarge (the
 * connection is dropped). The SDK's transports read every answer whole or as a stream; this bounds both.
 */
import type { FetchFunction } from '../../platform/guarded-net.js';
import { describeLimit } from '../remote.js';

export class AnswerTooLarge extends Error {
  override readonly name = 'AnswerTooLarge';
  constructor(limit: number) {
    super(`answer larger than ${describeLimit(limit)}`);
  }
}

/** Statuses whose Response cannot carry a body. */
const NULL_BODY = new Set([101, 204, 205, 304]);

export function limitedFetch(fetch: FetchFunction, limit: number): FetchFunction {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!response.body || NULL_BODY.has(response.status)) return response;
    let total = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          total += chunk.byteLength;
          if (total > limit) controller.error(new AnswerTooLarge(limit));
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** Whether an error (or one of its causes) is AnswerTooLarge. */
export function tooLarge(err: unknown): AnswerTooLarge | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof AnswerTooLarge) return e;
  }
  return undefined;
}
