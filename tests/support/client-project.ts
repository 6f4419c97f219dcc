/**
 * For the client's tests (tests/unit/client-types.test.ts, tests/processes/client-docs.test.ts and
 * client-live-types.test.ts): a project of an integrator's, in a temporary directory with `holon` installed
 * (node_modules/holon → this repository, so `import … from 'holon/client'` goes through package.json's `exports` as it
 * would from npm), type-checked by the project's TypeScript (its compiler API, strict) and run by Node with or without
 * tsx.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';

export const ROOT = path.resolve(import.meta.dirname, '../..');

const run = promisify(execFile);

/** What an integrator's tsconfig would say: strict, Node's ES modules, Node's types (no DOM). */
export const STRICT_OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  types: ['node'],
  typeRoots: [path.join(ROOT, 'node_modules/@types')],
  // Declaration files are checked too (generated ones included); only the dependencies' own are not reported.
  skipLibCheck: false,
};

/** Every diagnostic of a program over `rootNames`, as `file(line,col): message`, but those inside node_modules/ of a dependency. */
export function typeErrors(rootNames: readonly string[], options: ts.CompilerOptions = STRICT_OPTIONS): string[] {
  const program = ts.createProgram(rootNames, options);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => !d.file || !/[\\/]node_modules[\\/](?!holon[\\/])/.test(d.file.fileName))
    .map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      if (!d.file || d.start === undefined) return text;
      const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
      return `${path.relative(ROOT, d.file.fileName)}(${line + 1},${character + 1}): ${text}`;
    });
}

export interface ClientProject {
  dir: string;
  /** Path of a file of the project. */
  file(name: string): string;
  write(name: string, text: string): Promise<string>;
  /** `node [--import tsx] <file>` in the project, with `env` added; never throws (a non-zero exit is `code`). */
  node(file: string, options?: { tsx?: boolean; env?: Record<string, string>; timeoutMs?: number }): Promise<{ code: number; stdout: string; stderr: string }>;
  remove(): Promise<void>;
}

/** A temporary ES-module project with `holon` (this repository) and the packages named in `packages` installed. */
export async function clientProject(packages: readonly string[] = []): Promise<ClientProject> {
  const dir = await mkdtemp(path.join(tmpdir(), 'holon-client-'));
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'integrator', private: true, type: 'module' }));
  await mkdir(path.join(dir, 'node_modules'));
  await symlink(ROOT, path.join(dir, 'node_modules/holon'), 'dir');
  for (const p of ['tsx', ...packages]) await symlink(path.join(ROOT, 'node_modules', p), path.join(dir, 'node_modules', p), 'dir');
  const file = (name: string) => path.join(dir, name);
  return {
    dir,
    file,
    async write(name, text) {
      await writeFile(file(name), text);
      return file(name);
    },
    async node(f, { tsx = false, env = {}, timeoutMs = 60_000 } = {}) {
      try {
        const args = [...(tsx ? ['--import', 'tsx'] : []), f];
        const { stdout, stderr } = await run(process.execPath, args, { cwd: dir, env: { ...process.env, ...env }, timeout: timeoutMs });
        return { code: 0, stdout, stderr };
      } catch (e) {
        const err = e as { code?: number; stdout?: string; stderr?: string; message: string };
        return { code: typeof err.code === 'number' ? err.code : 1, stdout: err.stdout ?? '', stderr: err.stderr ?? err.message };
      }
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
