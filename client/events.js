// @ts-check
/**
 * A call's events (GET /v0/calls/{id}/events, Server-Sent Events), read with `eventsource-parser` and resumed with
 * `Last-Event-ID` when the connection is cut: every event once, in order, until `completed`.
 */
import { createParser } from 'eventsource-parser';

/** How many cuts in a row a reader resumes after before it gives up. */
const MAX_RESUMES = 5;

/**
 * @typedef {import('./index.js').CallEvent} CallEventMessage
 * @typedef {{ url: string; headers: Record<string, string>; fetch: (input: Request) => Promise<Response>; lastEventId?: number; signal?: AbortSignal;
 *   onError: (response: Response) => Promise<never> }} EventsRequest
 */

/** @param {number} ms */
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * @param {EventsRequest} request
 * @returns {AsyncGenerator<CallEventMessage, void, undefined>}
 */
export async function* readCallEvents(request) {
  let after = request.lastEventId;
  for (let cuts = 0; ; ) {
    const headers = { ...request.headers, accept: 'text/event-stream', ...(after === undefined ? {} : { 'last-event-id': String(after) }) };
    const response = await request.fetch(new Request(request.url, { headers, ...(request.signal ? { signal: request.signal } : {}) }));
    if (!response.ok || !response.body) await request.onError(response);
    /** @type {CallEventMessage[]} */
    const queue = [];
    const parser = createParser({
      onEvent(m) {
        queue.push({ id: Number(m.id), event: /** @type {CallEventMessage['event']} */ (m.event), data: JSON.parse(m.data) });
      },
    });
    const reader = /** @type {ReadableStream<Uint8Array>} */ (response.body).getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
        for (let e = queue.shift(); e; e = queue.shift()) {
          after = e.id;
          cuts = 0;
          yield e;
          if (e.event === 'completed') return;
        }
      }
    } catch (e) {
      if (request.signal?.aborted) throw e;
    } finally {
      reader.releaseLock();
    }
    // Cut before `completed` (a proxy, a stopping API process): resume after the last event seen.
    cuts += 1;
    if (cuts > MAX_RESUMES) throw new Error(`the event stream of ${request.url} was cut ${MAX_RESUMES} times in a row`);
    await pause(100 * cuts);
  }
}
