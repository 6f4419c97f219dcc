/**
 * A TCP proxy in front of the test Postgres that loses connections on cue, for what a gateway does when the
 * database goes out of reach: `cutAfterAnswer(marker)` lets the next statement whose text contains `marker` run and
 * commit, then cuts its connection before the answer reaches the gateway (the server's ReadyForQuery, sent after the
 * commit, is read here and never passed on); `cutOnQuery(marker)` cuts as the statement is sent (it never runs);
 * `refuse(true)` cuts every open connection and refuses new ones until `refuse(false)`.
 */
import { createServer, type Server, type Socket, connect } from 'node:net';

export interface PgCutProxy {
  /** A database URL on the proxy: `url` with its host and port replaced. */
  through(url: string): string;
  /** Cut the connection of the next statement containing `marker` once the server has answered it (committed). Resolves when cut. */
  cutAfterAnswer(marker: string): Promise<void>;
  /** Cut the connection of the next statement containing `marker` as it is sent. Resolves when cut. */
  cutOnQuery(marker: string): Promise<void>;
  /** Cut every open connection and refuse new ones (true), or accept again (false). */
  refuse(on: boolean): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  server: Socket;
  /** Set once this connection sent the armed statement: its answer is being read, not passed on. */
  answering?: { buffered: Buffer; done(): void };
}

interface Armed {
  marker: Buffer;
  when: 'answer' | 'query';
  done(): void;
}

/** True once `bytes` holds a whole ReadyForQuery ('Z') message: the server's answer is complete (and committed). */
function holdsReadyForQuery(bytes: Buffer): boolean {
  let at = 0;
  while (at + 5 <= bytes.length) {
    const type = bytes[at]!;
    const length = bytes.readInt32BE(at + 1);
    if (at + 1 + length > bytes.length) return false;
    if (type === 0x5a) return true;
    at += 1 + length;
  }
  return false;
}

export async function startPgCutProxy(target: { host: string; port: number } = { host: '127.0.0.1', port: 5432 }): Promise<PgCutProxy> {
  const pairs = new Set<Pair>();
  let armed: Armed | undefined;
  let refusing = false;
  const cut = (p: Pair) => {
    p.client.destroy();
    p.server.destroy();
    pairs.delete(p);
  };

  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    const pair: Pair = { client, server: upstream };
    pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      const a = armed;
      if (a && chunk.includes(a.marker)) {
        armed = undefined;
        if (a.when === 'query') {
          cut(pair);
          a.done();
          return;
        }
        pair.answering = { buffered: Buffer.alloc(0), done: a.done };
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      const answering = pair.answering;
      if (!answering) {
        client.write(chunk);
        return;
      }
      answering.buffered = Buffer.concat([answering.buffered, chunk]);
      if (holdsReadyForQuery(answering.buffered)) {
        cut(pair);
        answering.done();
      }
    });
    const end = () => cut(pair);
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;

  const arm = (marker: string, when: Armed['when']) =>
    new Promise<void>((done) => {
      armed = { marker: Buffer.from(marker), when, done };
    });

  return {
    through: (url) => {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    cutAfterAnswer: (marker) => arm(marker, 'answer'),
    cutOnQuery: (marker) => arm(marker, 'query'),
    refuse: (on) => {
      refusing = on;
      if (on) for (const p of [...pairs]) cut(p);
    },
    close: async () => {
      for (const p of [...pairs]) cut(p);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
