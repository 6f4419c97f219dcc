/**
 * Exchanges: one JSON-RPC request (a tool call, or a session's initialize) and the HTTP traffic carrying it. The
 * transport binds each HTTP request to the exchange of the request it carries, so that the transport's fetch
 * (runtime.ts) can end the call at once when the HTTP side says the answer will never come. Also the signal the SDK
 * is given for a request, detached from the gateway's once the request is over.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  StreamableHTTPClientTransport,
  type JSONRPCMessage,
} from '@modelcontextprotocol/client';
import type { Failure } from '../messages.js';
import type { RunStream } from '../types.js';

/** A stream failure is reported after this grace, so an answer the SDK already holds still wins. */
const FAIL_GRACE_MS = 20;

export class Exchange {
  /**
   * The run whose tool call this is, when it may tell its caller things (its stream): a request the agent sends on
   * this exchange's response stream (an elicitation) is that run's question (pool.ts).
   */
  constructor(readonly stream?: RunStream) {
    this.failed = new Promise<Failure>((resolve) => (this.report = resolve));
  }

  /** Aborted when the request is over: closes its HTTP request and response stream if they are still open. */
  readonly controller = new AbortController();
  /** Resolves when the HTTP side says the SDK will never deliver the answer. */
  readonly failed: Promise<Failure>;
  /** The JSON-RPC response reached the SDK (the exchange may still be running: connect sends `initialized` after it). */
  answered = false;
  /**
   * The task a 2026-07-28 server answered with (`resultType: "task"`, the tasks extension): the SDK refuses such a
   * result, so the runtime follows the task itself (task.ts).
   */
  task: { taskId: string; pollIntervalMs?: number } | undefined;
  private report!: (f: Failure) => void;
  private reported = false;

  get ended(): boolean {
    return this.controller.signal.aborted;
  }

  /** The answer cannot come any more, unless it is already on its way to the SDK: decided after a short grace. */
  fail(f: Failure): void {
    if (this.reported || this.ended || this.answered) return;
    this.reported = true;
    setTimeout(() => {
      if (!this.answered) this.report(f);
    }, FAIL_GRACE_MS);
  }

  end(): void {
    this.controller.abort();
  }
}

/** The exchange whose request is being sent: set around client.callTool / client.connect, read by the transport's fetch. */
export const exchanges = new AsyncLocalStorage<Exchange | undefined>();

/**
 * Ties each HTTP request to the exchange of the JSON-RPC request it carries, and to nothing else (notifications,
 * replies), and tells the exchange when its response arrives.
 */
export class ExchangeTransport extends StreamableHTTPClientTransport {
  private readonly waiting = new Map<string | number, Exchange>();

  override send(message: JSONRPCMessage | JSONRPCMessage[], options?: Parameters<StreamableHTTPClientTransport['send']>[1]): Promise<void> {
    const exchange = exchanges.getStore();
    if (!exchange || Array.isArray(message) || !isJSONRPCRequest(message)) {
      return exchanges.run(undefined, () => super.send(message, options));
    }
    const id = message.id;
    this.waiting.set(id, exchange);
    exchange.controller.signal.addEventListener('abort', () => this.waiting.get(id) === exchange && this.waiting.delete(id), { once: true });
    return exchanges.run(exchange, () => super.send(message, options));
  }

  /** Installed as `onmessage` before the Client connects: Protocol.connect calls it before its own handler. */
  noteAnswer(message: JSONRPCMessage): void {
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    const id = message.id;
    if (id === undefined) return;
    const exchange = this.waiting.get(id);
    if (!exchange) return;
    exchange.answered = true;
    this.waiting.delete(id);
    const result = isJSONRPCResultResponse(message) ? (message.result as { resultType?: unknown; taskId?: unknown; pollIntervalMs?: unknown }) : undefined;
    if (result?.resultType === 'task' && typeof result.taskId === 'string') {
      exchange.task = { taskId: result.taskId, ...(typeof result.pollIntervalMs === 'number' ? { pollIntervalMs: result.pollIntervalMs } : {}) };
    }
  }
}

export class ExchangeFailed extends Error {
  constructor(readonly failure: Failure) {
    super(failure.message);
  }
}

/** `work`, unless the exchange fails first. The exchange ends either way. */
export async function within<T>(exchange: Exchange, work: () => Promise<T>): Promise<T> {
  try {
    const running = exchanges.run(exchange, work);
    return await Promise.race([
      running,
      exchange.failed.then((f): never => {
        throw new ExchangeFailed(f);
      }),
    ]);
  } finally {
    exchange.end();
  }
}

/**
 * A signal that follows `signal` until released. The SDK listens to a request's signal for good (and sends
 * notifications/cancelled whenever it fires), while the gateway's signal fires at the hard timeout even after the
 * run ended: the SDK only ever sees this one.
 */
export function follow(signal: AbortSignal): { signal: AbortSignal; release(): void } {
  const local = new AbortController();
  const forward = (): void => local.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  return { signal: local.signal, release: () => signal.removeEventListener('abort', forward) };
}

/** What the transport's fetch throws for an exchange already over, as fetch does for an aborted request. */
export function abortError(): Error {
  return new DOMException('This operation was aborted', 'AbortError');
}
