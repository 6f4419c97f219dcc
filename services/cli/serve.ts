/**
 * `holon serve | api | runner | settler | evaluator`: run every service in one process, or one service each.
 * Stops gracefully on SIGTERM / SIGINT: stop taking work, finish or hand back what runs, close connections; and, when
 * npm started it (`npm start`), once npm has gone (parent-watch.ts). `holon serve` on a dev gateway loads the mandates
 * of examples/mandates unless `--mandates` or HOLON_MANDATES names others (devMandatesDir).
 */
import { parseArgs } from 'node:util';
import { DatabaseInUseError } from '../../shared/db/pglite-lock.js';
import { ConfigError, devMandatesDir, splitList, type Config } from '../../shared/platform/config.js';
import type { Role, RunningGateway } from '../compose.js';
import { stopWhenParentGoes } from './parent-watch.js';

/**
 * Every role, in compose.ts's order (its ALL_ROLES): named here too, so that a misuse is said before the gateway
 * (compose.ts, and through it every service) is loaded; the record's type makes the compiler check that none is missing.
 */
const EVERY_ROLE: Readonly<Record<Role, true>> = { api: true, runner: true, settler: true, evaluator: true };
const ALL_ROLES = Object.keys(EVERY_ROLE) as readonly Role[];

export async function serveCommand(argv: string[], roles: readonly Role[] = ALL_ROLES): Promise<number> {
  const options = {
    port: { type: 'string' },
    host: { type: 'string' },
    db: { type: 'string' },
    registry: { type: 'string' },
    mandates: { type: 'string' },
    hosted: { type: 'boolean' },
  } as const;
  let values: ReturnType<typeof parseArgs<{ args: string[]; options: typeof options }>>['values'];
  try {
    ({ values } = parseArgs({ args: argv, options }));
  } catch (e) {
    process.stderr.write(`holon: ${(e as Error).message}\n`);
    return 2;
  }
  const overrides: Partial<Config> = {};
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!/^[0-9]+$/.test(values.port) || port > 65535) {
      process.stderr.write('holon: --port must be a port number\n');
      return 2;
    }
    overrides.port = port;
  }
  if (values.host) overrides.host = values.host;
  if (values.db) overrides.dbDir = values.db;
  if (values.registry) Object.assign(overrides, { registryDirs: splitList(values.registry), registryExplicit: true });
  if (values.hosted) overrides.hosted = true;
  if (values.mandates) overrides.mandatesDir = values.mandates;
  else if (roles.length === ALL_ROLES.length) {
    const dir = devMandatesDir(process.env, values.hosted === true);
    if (dir) overrides.mandatesDir = dir;
  }
  if (roles.length < ALL_ROLES.length && (!process.env.DATABASE_URL || !process.env.REDIS_URL)) {
    process.stderr.write(`holon ${roles.join(' ')}: a single service needs DATABASE_URL and REDIS_URL (use \`holon serve\` for the embedded defaults)\n`);
    return 2;
  }
  // The gateway is loaded only now that the arguments are known to be right (compose.ts loads each role it starts).
  const { startGateway } = await import('../compose.js');
  let gateway: RunningGateway;
  // A stop asked while the gateway starts (its API may already listen) is kept, and done once it has started: a
  // SIGTERM never kills a starting gateway half-way (the default action) and still ends in a clean stop, exit 0.
  let stopAsked = false;
  const early = (): void => {
    stopAsked = true;
  };
  process.on('SIGTERM', early);
  process.on('SIGINT', early);
  try {
    gateway = await startGateway(roles, overrides);
  } catch (e) {
    // A ListenError comes from the API only, which loaded services/api/start.ts: looked for last, and where the API ran.
    if (e instanceof ConfigError || e instanceof DatabaseInUseError || (roles.includes('api') && e instanceof (await import('../api/start.js')).ListenError)) {
      process.stderr.write(`${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    process.off('SIGTERM', early);
    process.off('SIGINT', early);
  }
  const webhook = gateway.webhookSecret;
  if (webhook?.generated) {
    // Printed once, here, for the operator: never in the structured log (docs/webhooks.md).
    process.stdout.write(
      `\nholon: webhooks are signed with ${webhook.secret}\n` +
        '       (generated for this run; set HOLON_CALLBACK_SECRET to a whsec_ secret to keep one across restarts)\n\n',
    );
  }
  await new Promise<void>((resolve) => {
    let stopping = false;
    const shutdown = () => {
      if (stopping) return;
      stopping = true;
      process.off('SIGTERM', shutdown);
      process.off('SIGINT', shutdown);
      unwatch();
      void gateway.stop().then(resolve, (e) => {
        process.stderr.write(`holon: shutdown failed: ${(e as Error).message}\n`);
        resolve();
      });
    };
    const unwatch = stopWhenParentGoes(shutdown);
    process.on('SIGTERM', shutdown);
    process.on('SIGINT', shutdown);
    if (stopAsked) shutdown();
  });
  return 0;
}
