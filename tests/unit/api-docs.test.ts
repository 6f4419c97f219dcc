/**
 * docs/api.md is generated from the route table (scripts/api-docs.ts over ROUTE_OPERATIONS): the page is exactly what
 * the generator writes, so a route added, removed or reworded without regenerating it fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_DOC, renderApi } from '../../scripts/api-docs.js';
import { ROUTE_OPERATIONS } from '../../services/api/openapi/index.js';

describe('docs/api.md', () => {
  it('is what scripts/api-docs.ts generates from the route table (run it after changing a route)', () => {
    expect(readFileSync(API_DOC, 'utf8')).toBe(renderApi());
  });

  it('lists every route once', () => {
    const text = readFileSync(API_DOC, 'utf8');
    for (const op of ROUTE_OPERATIONS) {
      expect(text.split(`| \`${op.method.toUpperCase()} ${op.path}\` |`).length - 1, `${op.method} ${op.path}`).toBe(1);
    }
  });
});
