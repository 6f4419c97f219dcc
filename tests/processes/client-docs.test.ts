/**
 * docs/client.md cannot rot: its first ```ts block (the ten-line example) is type-checked, strict, as an integrator's
 * program importing `holon/client` through package.json's `exports`, and run with tsx against a dev gateway (the
 * mandates of examples/mandates, as `npm start` loads them; `HOLON_URL` says where); its first ```js block is run by
 * plain Node, no loader.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from 'vitest';
import { clientProject, ROOT, STRICT_OPTIONS, typeErrors } from '../support/client-project.js';
import { startTestGateway, useAudited } from '../support/gateway.js';

/** The first fenced block of `lang` in the page. */
function firstBlock(page: string, lang: string): string {
  const m = page.match(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'm'));
  if (!m) throw new Error(`docs/client.md has no \`\`\`${lang} block`);
  return m[1]!;
}

test('docs/client.md: the TypeScript example type-checks and runs against a dev gateway; the plain-Node one runs without a loader', async () => {
  const page = readFileSync(path.join(ROOT, 'docs/client.md'), 'utf8');
  const example = firstBlock(page, 'ts');
  const plain = firstBlock(page, 'js');
  expect(example).toContain("from 'holon/client'");
  expect(example).toContain('process.env.HOLON_URL');
  expect(example.trim().split('\n').length).toBeLessThanOrEqual(14);

  await useAudited(await startTestGateway({ config: { mandatesDir: 'examples/mandates' } }), async (g) => {
    const project = await clientProject();
    try {
      const ts = await project.write('example.ts', example);
      // The declarations themselves are checked by tests/unit/client-types.test.ts; here, the example's use of them.
      expect(typeErrors([ts], { ...STRICT_OPTIONS, skipLibCheck: true })).toEqual([]);
      const ran = await project.node(ts, { tsx: true, env: { HOLON_URL: g.url } });
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout).toContain("{ text: 'HELLO' } cost 0.01 EUR");
      expect(ran.stdout).toMatch(/^ {2}0\.00\d+ to holon$/m);
      expect(ran.stdout).toMatch(/^r_\S+ examples\/echo-upper@1\.0\.0 succeeded 0\.01$/m);
      expect(ran.stdout).toContain('that was every receipt');

      const js = await project.write('check.mjs', plain);
      const checked = await project.node(js, { env: { HOLON_URL: g.url } });
      expect(checked.code, checked.stderr).toBe(0);
      expect(checked.stdout.trim()).toBe('422 rejected_input $.text: is required; $.txt: is not a known field');
    } finally {
      await project.remove();
    }
  });
});
