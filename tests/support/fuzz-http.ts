/**
 * The fuzz test's HTTP side: raw requests over node:http (exact bytes, any content type, latin-1 header values),
 * Server-Sent-Events bodies of /mcp read back as JSON-RPC messages, and the checks every reply must pass.
 */
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { expect } from 'vitest';
import type { TestGateway } from './gateway.js';
import { poll } from './poll.js';

export interface RawRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  /** Sent exactly as given (a string is UTF-8 encoded). */
  body?: string | Buffer;
}

export interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body as JSON, or undefined when it is not JSON. */
  json: unknown;
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

/** One request; a body the server stops reading (413) may reset the socket after the answer, which is kept. */
export function rawRequest(base: string, r: RawRequest, timeoutMs = 30_000): Promise<RawReply> {
  const url = new URL(r.path, base);
  const body = r.body === undefined ? undefined : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body, 'utf8');
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: r.method,
        path: url.pathname + url.search,
        headers: { ...(body ? { 'content-length': String(body.length) } : {}), ...r.headers },
        timeout: timeoutMs,
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parseJson(text) });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (e) => {
      if (!answered) reject(e);
    });
    if (body) req.write(body, () => undefined);
    req.end();
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The JSON-RPC messages of a /mcp reply: a JSON body, or the `data:` lines of an event stream. */
function rpcMessages(reply: RawReply): unknown[] | undefined {
  if (String(reply.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    const out: unknown[] = [];
    for (const event of reply.text.split(/\r?\n\r?\n/)) {
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (data) out.push(parseJson(data) ?? { unparsable: data });
    }
    return out;
  }
  if (reply.json === undefined) return undefined;
  return Array.isArray(reply.json) ? reply.json : [reply.json];
}

/** Text no answer may contain: stack frames, database and runtime errors. */
const INTERNAL = [
  /\n\s+at \S/,
  / {4}at [\w.<]/,
  /invalid input syntax/i,
  /unsupported Unicode escape/i,
  /stack depth limit/i,
  /TypeError/,
  /RangeError/,
  /ReferenceError/,
  /SyntaxError/,
  /Maximum call stack/i,
  /node_modules/,
  /\bknex\b/i,
  /violates .* constraint/i,
  /duplicate key value/i,
  /ECONNREFUSED|ECONNRESET/,
  /\bundefined is not\b|Cannot read propert/,
];

function internalText(text: string): string | undefined {
  return INTERNAL.find((re) => re.test(text))?.source;
}

/** A short, printable excerpt of a reply for failure messages. */
export function excerpt(reply: RawReply, max = 400): string {
  const t = reply.text.length > max ? `${reply.text.slice(0, max)}… (${reply.text.length} chars)` : reply.text;
  return `${reply.status} ${JSON.stringify(t)}`;
}

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The REST error shape: `{error: {code, message, problems?}}`. */
function hasErrorShape(body: unknown): boolean {
  if (!isObject(body) || !isObject(body.error)) return false;
  const { code, message, problems } = body.error;
  if (typeof code !== 'string' || code === '' || typeof message !== 'string') return false;
  return (
    problems === undefined || (Array.isArray(problems) && problems.every((p) => isObject(p) && typeof p.path === 'string' && typeof p.message === 'string'))
  );
}

/** Problems of a 400 that name where they are. */
export function problemPaths(body: unknown): string[] {
  if (!hasErrorShape(body)) return [];
  const problems = (body as any).error.problems as Array<{ path: string }> | undefined;
  return (problems ?? []).map((p) => p.path).filter((p) => p.startsWith('$'));
}

/** What every REST reply must be: never 5xx (but an agent's own failure, 502), never internal text, every 4xx in the error shape. */
export function checkRest(reply: RawReply, what: string): void {
  const where = `${what} → ${excerpt(reply)}`;
  // 502 is the agent's failure, with its receipt (gateway.md §5); a gateway failure is never an answer to input.
  const receipt = (reply.json as any)?.receipt;
  const agentFailed = reply.status === 502 && receipt?.status === 'failed' && receipt.error !== 'gateway_error';
  if (!agentFailed) expect(reply.status, `5xx: ${where}`).toBeLessThan(500);
  expect(internalText(reply.text), `internal error text: ${where}`).toBeUndefined();
  if (reply.status >= 400) expect(hasErrorShape(reply.json), `4xx without {error: {code, message}}: ${where}`).toBe(true);
}

/** A JSON-RPC 2.0 message: a response (result or error {code, message}), a request or a notification. */
function isRpcMessage(m: unknown): boolean {
  if (!isObject(m) || m.jsonrpc !== '2.0') return false;
  if ('error' in m) return isObject(m.error) && Number.isInteger(m.error.code) && typeof m.error.message === 'string' && !('result' in m);
  return 'result' in m || typeof m.method === 'string';
}

/** What every /mcp reply must be: never 5xx, never internal text, every body JSON-RPC (202 may be empty). */
export function checkRpc(reply: RawReply, what: string): unknown[] {
  const where = `${what} → ${excerpt(reply)}`;
  expect(reply.status, `5xx: ${where}`).toBeLessThan(500);
  expect(internalText(reply.text), `internal error text: ${where}`).toBeUndefined();
  if (reply.status === 202 && reply.text === '') return [];
  const messages = rpcMessages(reply);
  expect(messages, `not JSON-RPC: ${where}`).toBeDefined();
  for (const m of messages!) expect(isRpcMessage(m), `not a JSON-RPC message: ${where}`).toBe(true);
  for (const m of messages! as any[]) {
    // -32603 is JSON-RPC's "internal error": a 500 in other words.
    expect(m.error?.code, `JSON-RPC internal error: ${where}`).not.toBe(-32603);
    // A tool answering gateway_error failed inside the gateway.
    expect(m.result?.structuredContent?.error?.code, `tool result gateway_error: ${where}`).not.toBe('gateway_error');
  }
  return messages!;
}

/** Wait until no call is queued, running or settling; then no hold may be live. */
export async function drainedWithoutLiveHolds(g: TestGateway, ms = 30_000): Promise<void> {
  let live = '0';
  await poll(
    async () => {
      const open = await g.db.knex('calls').whereIn('status', ['queued', 'running', 'settling']).count<{ n: string }[]>({ n: '*' });
      live = String(open[0]!.n);
      return Number(live) === 0;
    },
    { what: 'no call to be queued, running or settling', timeoutMs: ms, intervalMs: 100, context: () => `${live} calls still live after ${ms} ms` },
  );
  expect(await g.db.knex('holds').where({ status: 'held' }).select('id', 'amount', 'account')).toEqual([]);
}
