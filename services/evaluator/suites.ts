/**
 * Where the suites of a capability are (spec/evals.md §1–§2): `evals/<capability>/suite.yaml` in the repository,
 * replaced capability by capability by `HOLON_PRIVATE_EVALS/<capability>/suite.yaml` when that directory has one.
 */
import { access } from 'node:fs/promises';
import path from 'node:path';

export interface SuiteDirs {
  /** The public samples (the repository's `evals/`). */
  publicDir: string;
  /** HOLON_PRIVATE_EVALS, when set. */
  privateDir?: string;
}

export interface SuiteLocation {
  capability: string;
  file: string;
  hidden: boolean;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** The suite file for each capability that has one; capabilities without a suite are left out. */
export async function locateSuites(capabilities: readonly string[], dirs: SuiteDirs): Promise<SuiteLocation[]> {
  const found: SuiteLocation[] = [];
  for (const capability of capabilities) {
    // A capability names a directory: never let one climb out of the suites directory.
    if (!/^[a-z0-9][a-z0-9.-]*$/.test(capability) || capability.includes('..')) continue;
    const hiddenFile = dirs.privateDir ? path.join(dirs.privateDir, capability, 'suite.yaml') : undefined;
    if (hiddenFile && (await exists(hiddenFile))) {
      found.push({ capability, file: hiddenFile, hidden: true });
      continue;
    }
    const publicFile = path.join(dirs.publicDir, capability, 'suite.yaml');
    if (await exists(publicFile)) found.push({ capability, file: publicFile, hidden: false });
  }
  return found;
}
