/**
 * A gateway on its embedded defaults, as `npm start` runs it: PGlite in a new temporary directory, the in-process
 * queue, store and notifier — whatever DATABASE_URL, REDIS_URL (and `unset`) say in the test's environment, which is
 * left as it was.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ALL_ROLES, startGateway } from '../../services/compose.js';
import { TEST_REGISTRY } from './gateway.js';

export async function startEmbeddedGateway(
  name: string,
  options: { registryDirs?: string[]; unset?: string[] } = {},
): Promise<Awaited<ReturnType<typeof startGateway>>> {
  const names = ['DATABASE_URL', 'REDIS_URL', ...(options.unset ?? [])];
  const saved = Object.fromEntries(names.map((n) => [n, process.env[n]]));
  for (const n of names) delete process.env[n];
  const dir = await mkdtemp(path.join(tmpdir(), `holon-${name}-`));
  try {
    return await startGateway(ALL_ROLES, {
      port: 0,
      dbDir: path.join(dir, 'db'),
      registryDirs: options.registryDirs ?? [...TEST_REGISTRY],
      registryExplicit: true,
      agentHost: false,
      logLevel: 'warn',
    });
  } finally {
    Object.assign(process.env, Object.fromEntries(Object.entries(saved).filter(([, v]) => v !== undefined)));
  }
}
