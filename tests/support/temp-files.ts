/**
 * Files a test writes and removes: `inDir(run)` gives `run` a `file(name, content)` that writes into a new temporary
 * directory (JSON for anything but a string) and answers its path, and removes the directory afterwards;
 * `counterFile()` is an empty file an agent appends each call id to (`fixtures/counter`), `lines(file)` what it holds.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export async function inDir<T>(run: (file: (name: string, content: unknown) => Promise<string>) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'holon-test-'));
  try {
    return await run(async (name, content) => {
      const file = path.join(dir, name);
      await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
      return file;
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function counterFile(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'holon-counter-'));
  const file = path.join(dir, 'calls.log');
  await writeFile(file, '');
  return file;
}

export const lines = async (file: string): Promise<string[]> => (await readFile(file, 'utf8')).split('\n').filter(Boolean);
