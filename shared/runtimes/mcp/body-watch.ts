/**
 * Response bodies: the size cap, and what the end of a stream means. The transport's fetch (runtime.ts) passes every
 * body through `watchBody`, which tells it when the answer is too large, when the stream broke, and whether an event
 * stream carried an event id the SDK may resume from.
 */
import { describeLimit } from '../remote.js';

export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
  constructor(readonly limit: number) {
    super(`answer larger than ${describeLimit(limit)}`);
  }
}

export interface BodyWatch {
  sse: boolean;
  tooLarge(): void;
  broken(err: unknown): void;
  ended(primed: boolean): void;
}

const ID_FIELD = [0x69, 0x64, 0x3a]; // "id:"

/** Pass `source` through, at most `limit` bytes; for an event stream, notice an `id:` field (the SDK may resume from it). */
export function watchBody(source: ReadableStream<Uint8Array>, limit: number, watch: BodyWatch): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let total = 0;
  let primed = false;
  /** How much of "id:" the current line starts with; -1 once the line cannot be an id field. */
  let matched = 0;
  const scan = (bytes: Uint8Array): void => {
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      if (b === 0x0a || b === 0x0d) {
        matched = 0;
      } else if (matched < 0) {
        const next = bytes.indexOf(0x0a, i);
        if (next < 0) return;
        i = next - 1;
      } else if (b === ID_FIELD[matched]) {
        matched += 1;
        if (matched === ID_FIELD.length) {
          primed = true;
          return;
        }
      } else {
        matched = -1;
      }
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        watch.broken(err);
        controller.error(err);
        return;
      }
      if (chunk.done) {
        watch.ended(primed);
        controller.close();
        return;
      }
      total += chunk.value.byteLength;
      if (total > limit) {
        const err = new ResponseTooLargeError(limit);
        watch.tooLarge();
        reader.cancel(err).catch(() => undefined);
        controller.error(err);
        return;
      }
      if (watch.sse && !primed) scan(chunk.value);
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
