/**
 * The client's types (docs/client.md): client/openapi.d.ts is exactly what scripts/client-types.ts generates from
 * the route table (a document change without `npm run client:types` fails here), and client/index.js is checked
 * against its declarations, client/index.d.ts (strict, `checkJs`; the `@type` of each export ties it to them).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_TYPES, renderClientTypes } from '../../scripts/client-types.js';
import { ROOT, STRICT_OPTIONS, typeErrors } from '../support/client-project.js';

describe('client/openapi.d.ts', () => {
  it('is what `npm run client:types` writes from the route table (run it after changing services/api/openapi/ or a route)', async () => {
    const committed = readFileSync(CLIENT_TYPES, 'utf8');
    const fresh = await renderClientTypes();
    // Not toBe(): a failure would print two 4,000-line files. The first line that differs says enough.
    const a = committed.split('\n');
    const b = fresh.split('\n');
    const at = a.findIndex((line, i) => line !== b[i]);
    const first = at === -1 && a.length === b.length ? null : { line: (at === -1 ? Math.min(a.length, b.length) : at) + 1, committed: a[at], fresh: b[at] };
    expect(first, 'client/openapi.d.ts is out of date: run npm run client:types').toBeNull();
  });
});

describe('client/index.js', () => {
  it('type-checks against client/index.d.ts and the generated types, strict (a declaration the code does not keep fails)', () => {
    const files = ['client/index.js', 'client/index.d.ts', 'client/openapi.d.ts'].map((f) => path.join(ROOT, f));
    const options = {
      ...STRICT_OPTIONS,
      allowJs: true,
      checkJs: true,
      noUncheckedIndexedAccess: true,
      noImplicitOverride: true,
      // fetch, Request, Response and Blob as a browser has them (no @types/node: the client uses nothing of Node's),
      // which also keeps the check to seconds: the declarations are checked (skipLibCheck off), the standard library not.
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipDefaultLibCheck: true,
    };
    expect(typeErrors(files, options)).toEqual([]);
  });
});
