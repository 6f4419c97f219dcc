/**
 * Where the test bed finds real Postgres and Redis:
 * 1. DATABASE_URL / REDIS_URL from the environment (CI sets them);
 * 2. else the machine's own services on loopback, when they answer;
 * 3. else containers started with testcontainers (a laptop with Docker).
 */
import net from 'node:net';

export interface Services {
  databaseUrl: string;
  redisUrl: string;
  stop(): Promise<void>;
}

function answers(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export async function startServices(): Promise<Services> {
  const stops: Array<() => Promise<unknown>> = [];
  let databaseUrl = process.env.DATABASE_URL;
  let redisUrl = process.env.REDIS_URL;

  if (!databaseUrl && (await answers('127.0.0.1', 5432))) databaseUrl = 'postgres://postgres@127.0.0.1:5432/postgres';
  if (!redisUrl && (await answers('127.0.0.1', 6379))) redisUrl = 'redis://127.0.0.1:6379';

  if (!databaseUrl) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:16-alpine').start();
    databaseUrl = container.getConnectionUri();
    stops.push(() => container.stop());
  }
  if (!redisUrl) {
    const { GenericContainer } = await import('testcontainers');
    const container = await new GenericContainer('redis:7-alpine').withExposedPorts(6379).start();
    redisUrl = `redis://${container.getHost()}:${container.getMappedPort(6379)}`;
    stops.push(() => container.stop());
  }
  return {
    databaseUrl,
    redisUrl,
    stop: async () => {
      await Promise.all(stops.map((s) => s()));
    },
  };
}
