/**
 * A Server-Sent Events client for tests: fetch, with `eventsource-parser` (the parser the MCP SDK's own SSE client
 * uses) reading the stream. It reads until the stream ends or `until` says stop — then it cuts the connection, as
 * a client that goes away does.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseEvent {
  id: number;
  event: string;
  data: any;
}

export interface SseReply {
  status: number;
  headers: Headers;
  events: SseEvent[];
  /** The stream ended by itself (the server closed it), not cut by `until`. */
  ended: boolean;
  /** A body that was not a stream (an error's JSON). */
  body?: any;
}

export async function readEvents(
  url: string,
  options: {
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: unknown;
    until?: (e: SseEvent, all: SseEvent[]) => boolean;
    timeoutMs?: number;
  } = {},
): Promise<SseReply> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no end of the stream within ${options.timeoutMs ?? 20_000} ms`)), options.timeoutMs ?? 20_000);
  try {
    const res = await fetch(url, {
      method: options.method ?? 'GET',
      headers: {
        accept: 'text/event-stream',
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      signal: controller.signal,
    });
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      const text = await res.text();
      return { status: res.status, headers: res.headers, events: [], ended: true, body: text ? JSON.parse(text) : undefined };
    }
    const events: SseEvent[] = [];
    let stop = false;
    const parser = createParser({
      onEvent(m: EventSourceMessage) {
        if (stop) return;
        const e = { id: Number(m.id), event: m.event ?? 'message', data: JSON.parse(m.data) };
        events.push(e);
        if (options.until?.(e, events)) stop = true;
      },
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { status: res.status, headers: res.headers, events, ended: true };
      parser.feed(decoder.decode(value, { stream: true }));
      if (stop) {
        controller.abort();
        await reader.cancel().catch(() => undefined);
        return { status: res.status, headers: res.headers, events, ended: false };
      }
    }
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A `readEvents` `until` that answers each question on the stream with `input` (POST /v0/calls/{id}/input, through
 * `post`) and reads on; `answered()`: the last answer's reply.
 */
export function answeringWith(post: (path: string, body: unknown) => Promise<unknown>, input: unknown) {
  let answered: Promise<unknown> | undefined;
  return {
    until: (e: SseEvent, all: SseEvent[]): boolean => {
      if (e.event === 'input_required') {
        const id = all[0]!.data.call.id as string;
        answered = post(`/v0/calls/${id}/input`, { input, question: e.id });
      }
      return false;
    },
    answered: () => answered,
  };
}
