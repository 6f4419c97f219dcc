import { existsSync } from 'node:fs';
import path from 'node:path';
import { valueIn } from './declare.js';
import { MANDATES } from './mandates.js';
import { MODE } from './mode.js';

/** `holon serve`'s mandates on a dev gateway when neither `--mandates` nor HOLON_MANDATES names any. */
const DEV_MANDATES_DIR = 'examples/mandates';

/**
 * The mandates `holon serve` loads when none are named: examples/mandates (relative to the working directory, like the
 * default registry, and only when it exists) on a dev gateway. HOLON_MANDATES set, even empty, decides instead (empty
 * = none); hosted mode (`--hosted`, HOLON_HOSTED) and production load none by default: their mandates are made
 * through the API by the accounts that own them, and examples/mandates would give the account `demo` credit.
 */
export function devMandatesDir(env: NodeJS.ProcessEnv, hostedFlag = false): string | undefined {
  if (env[MANDATES.mandatesDir.env] !== undefined) return undefined;
  if (hostedFlag || valueIn(MODE.hosted, env) || valueIn(MODE.production, env)) return undefined;
  return existsSync(path.resolve(DEV_MANDATES_DIR)) ? DEV_MANDATES_DIR : undefined;
}
