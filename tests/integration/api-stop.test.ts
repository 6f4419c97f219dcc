/**
 * The API's HTTP server against slow clients, and while it stops (services/api/start.ts; docs/operating.md):
 *
 * - a client sending its headers one byte a second is answered 408 and cut off within HOLON_HEADERS_TIMEOUT_S (plus
 *   the one-second check), while a normal request on another connection succeeds meanwhile; an idle keep-alive
 *   connection is closed after HOLON_KEEPALIVE_TIMEOUT_S; a call that takes longer than the headers timeout to answer
 *   is not cut (the timeouts bound what the client sends, not the wait for the answer);
 * - on stop: `/readyz` fails, a request arriving on a kept-alive connection is answered 503 with Retry-After and the
 *   connection closes, a new connection is refused; a synchronous call in flight is answered when it ends, and one
 *   still running when the stop grace passes gets 202 with its state URL (Location).
 */
import net from 'node:net';
import { describe, expect, test } from 'vitest';
import { startTestGateway, TEST_REGISTRY, type TestGateway } from '../support/gateway.js';
import { sleep } from '../support/poll.js';

/** The test agents and fixtures/hang (a call that takes `ms`). */
const REGISTRY = [...TEST_REGISTRY, 'tests/fixtures/scale'];

/** A raw connection to the gateway, and everything it has received so far. */
async function connect(port: number): Promise<{ socket: net.Socket; received: () => string; closed: Promise<number> }> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let data = '';
  socket.setEncoding('utf8').on('data', (c: string) => (data += c));
  socket.on('error', () => {});
  const opened = Date.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - opened)));
  return { socket, received: () => data, closed };
}

const json = (body: unknown) => {
  const text = JSON.stringify(body);
  return `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
};

async function mandate(g: TestGateway): Promise<void> {
  await g.mandate({ id: 'alice/stop', allow: { agents: ['fixtures/*', 'examples/*'] } });
}

describe('the API against slow clients', () => {
  test('headers sent a byte a second: 408 and closed within the timeout; a normal request meanwhile succeeds; idle keep-alive closed; a long answer is not cut', async () => {
    const g = await startTestGateway({ config: { registryDirs: REGISTRY, headersTimeoutS: 2, requestTimeoutS: 3, keepAliveTimeoutS: 1 } });
    try {
      await mandate(g);
      const port = g.gw.port!;
      const slow = await connect(port);
      const request = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ' + 'a'.repeat(100);
      let sent = 0;
      const drip = setInterval(() => {
        if (!slow.socket.destroyed && sent < request.length) slow.socket.write(request[sent++]!);
      }, 1_000);
      try {
        // Meanwhile a normal request succeeds.
        await sleep(1_200);
        expect((await fetch(`${g.url}/healthz`)).status).toBe(200);
        const closedAfter = await Promise.race([slow.closed, sleep(6_000).then(() => -1)]);
        expect(closedAfter, 'the slow client is cut off').toBeGreaterThan(0);
        // headersTimeout 2 s, checked every 500 ms: cut within 2 to 3.5 s (a busy machine adds a little).
        expect(closedAfter).toBeLessThan(4_500);
        expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
        expect(sent, 'bytes it managed to send').toBeLessThan(6);
      } finally {
        clearInterval(drip);
      }

      // An idle keep-alive connection: closed by the server after keepAliveTimeout (1 s).
      const idle = await connect(port);
      idle.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      const idleClosed = await Promise.race([idle.closed, sleep(5_000).then(() => -1)]);
      expect(idle.received()).toMatch(/^HTTP\/1\.1 200 /);
      expect(idleClosed).toBeGreaterThan(0);
      expect(idleClosed).toBeLessThan(3_500);

      // A synchronous call answered after 4 s, longer than both timeouts: answered, not cut.
      const started = Date.now();
      const r = await g.post('/v0/calls', { mandate: 'alice/stop', agent: 'fixtures/hang', input: { ms: 4_000 } });
      expect(r.status).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_000);
    } finally {
      await g.stop();
    }
  }, 60_000);
});

describe('the API while it stops', () => {
  test('readiness fails, a kept-alive request gets 503 + Retry-After and a closed connection, a new one is refused; held calls are answered, or 202 with their state URL at the grace', async () => {
    const g = await startTestGateway({ config: { registryDirs: REGISTRY, stopGraceS: 2, keepAliveTimeoutS: 30 } });
    const port = g.gw.port!;
    let stopped: Promise<void> | undefined;
    try {
      await mandate(g);
      expect((await fetch(`${g.url}/readyz`)).status).toBe(200);
      // A kept-alive connection busy with a call: the stop cannot close it before its answer.
      const kept = await connect(port);
      kept.socket.write(`POST /v0/calls HTTP/1.1\r\nHost: 127.0.0.1\r\n${json({ mandate: 'alice/stop', agent: 'fixtures/hang', input: { ms: 800 } })}`);
      // Two synchronous calls held: one ends within the grace (200), one outlasts it (202 + Location).
      const short = g.post('/v0/calls', { mandate: 'alice/stop', agent: 'fixtures/hang', input: { ms: 1_000 } });
      const long = g.post('/v0/calls', { mandate: 'alice/stop', agent: 'fixtures/hang', input: { ms: 8_000 } });
      await sleep(300);
      const stopAt = Date.now();
      stopped = g.gw.stop();
      await sleep(50);
      // The next request on the kept-alive connection (sent while the first is still running): 503, Retry-After, closed.
      kept.socket.write('GET /v0/receipts HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      const keptClosed = await Promise.race([kept.closed, sleep(5_000).then(() => -1)]);
      const answers = kept.received().split(/(?=HTTP\/1\.1 )/);
      expect(answers[0], 'the call in flight is answered').toMatch(/^HTTP\/1\.1 200 /);
      expect(answers[0]).toMatch(/\r\nconnection: close\r\n/i);
      // The stop asked the connection to close after its answer: the second request is not served (or, read in time, 503).
      if (answers[1] !== undefined) expect(answers[1]).toMatch(/^HTTP\/1\.1 503 [\s\S]*\r\nretry-after: 1\r\n/i);
      expect(keptClosed, 'the kept-alive connection is closed').toBeGreaterThan(0);
      // A new connection is refused.
      await expect(fetch(`${g.url}/readyz`)).rejects.toThrow();

      const shortAnswer = await short;
      expect(shortAnswer.status, 'a call that ends within the grace is answered').toBe(200);
      const longAnswer = await long;
      expect(longAnswer.status, 'a call still running at the grace: 202').toBe(202);
      expect(Date.now() - stopAt).toBeLessThan(6_000);
      const id = (longAnswer.body as { call: { id: string } }).call.id;
      expect(longAnswer.headers.get('location')).toBe(`/v0/calls/${id}`);
      await stopped;
      // The runner handed the long run back: it ended, unbilled.
      const receipt = await g.db.knex('receipts').where({ id }).first('status', 'error_code', 'billed');
      expect(receipt).toEqual({ status: 'failed', error_code: 'gateway_restarted', billed: false });
    } finally {
      await (stopped ?? g.gw.stop()).catch(() => undefined);
      await g.stop().catch(() => undefined);
    }
  }, 60_000);

  test('a request that arrives while the API stops: 503 with Retry-After and Connection: close', async () => {
    const g = await startTestGateway({ config: { registryDirs: REGISTRY, stopGraceS: 2, keepAliveTimeoutS: 30 } });
    let stopped: Promise<void> | undefined;
    try {
      await mandate(g);
      // A call in flight keeps the stop waiting; meanwhile a request whose headers were still arriving completes.
      const inFlight = g.post('/v0/calls', { mandate: 'alice/stop', agent: 'fixtures/hang', input: { ms: 1_000 } });
      const late = await connect(g.gw.port!);
      late.socket.write('GET /v0/receipts HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      await sleep(200);
      stopped = g.gw.stop();
      await sleep(100);
      late.socket.write('\r\n');
      const closedAfter = await Promise.race([late.closed, sleep(5_000).then(() => -1)]);
      expect(late.received()).toMatch(/^HTTP\/1\.1 503 /);
      expect(late.received()).toMatch(/\r\nretry-after: 1\r\n/i);
      expect(late.received()).toMatch(/\r\nconnection: close\r\n/i);
      expect(late.received()).toContain('"code":"busy"');
      expect(closedAfter).toBeGreaterThan(0);
      expect((await inFlight).status).toBe(200);
      await stopped;
    } finally {
      await (stopped ?? g.gw.stop()).catch(() => undefined);
      await g.stop().catch(() => undefined);
    }
  }, 60_000);
});
