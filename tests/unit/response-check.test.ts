/**
 * The tests' response checker (tests/support/response-check.ts): an answer is checked against its operation's
 * schema with object schemas closed where they list properties and say nothing of others, so a field the document
 * does not declare fails; free-form JSON (no `properties`, or `additionalProperties: true`) stays open, and a branch
 * of a `oneOf` whose parent lists properties is not closed on its own.
 */
import { describe, expect, it } from 'vitest';
import { checkerOf, closedSchema } from '../support/response-check.js';

const json = (schema: unknown) => ({ description: 'x', content: { 'application/json': { schema } } });

const DOC = {
  openapi: '3.1.0',
  paths: {
    '/v0/things/{id}': {
      get: {
        responses: {
          200: json({ $ref: '#/components/schemas/Thing' }),
          202: json({
            type: 'object',
            properties: { status: { type: 'string' } },
            required: ['status'],
            oneOf: [
              { properties: { call: { type: 'string' } }, required: ['call'] },
              { properties: { receipt: { type: 'string' } }, required: ['receipt'] },
            ],
          }),
        },
      },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          budget: { type: 'object', properties: { total: { type: 'string' } } },
          output: { type: 'object', description: 'an agent’s output: any JSON' },
          extra: { type: 'object', properties: { known: { type: 'string' } }, additionalProperties: true },
        },
        required: ['id'],
      },
    },
  },
};

describe('the response checker', () => {
  const check = checkerOf(DOC);

  it('flags a field the document does not declare, at any depth', () => {
    expect(() => check('GET', '/v0/things/t1', 200, { id: 't1', budget: { total: '1.00' } })).not.toThrow();
    expect(() => check('GET', '/v0/things/t1', 200, { id: 't1', undeclared: 1 })).toThrow(/must NOT have unevaluated properties: undeclared/);
    expect(() => check('GET', '/v0/things/t1', 200, { id: 't1', budget: { total: '1.00', fx: { USD: '0.9' } } })).toThrow(
      /\/budget must NOT have unevaluated properties: fx/,
    );
  });

  it('leaves free-form JSON open: no properties listed, or additionalProperties: true', () => {
    expect(() => check('GET', '/v0/things/t1', 200, { id: 't1', output: { anything: [1, { deep: true }] }, extra: { known: 'k', more: 2 } })).not.toThrow();
  });

  it('closes a oneOf with its parent: each branch may add its fields, nothing else', () => {
    expect(() => check('GET', '/v0/things/t1', 202, { status: 'queued', call: 'c_1' })).not.toThrow();
    expect(() => check('GET', '/v0/things/t1', 202, { status: 'held', receipt: 'r_1' })).not.toThrow();
    expect(() => check('GET', '/v0/things/t1', 202, { status: 'held', receipt: 'r_1', other: true })).toThrow(/other/);
  });

  it('keeps what a schema says of other fields, and never closes data (const, enum, examples)', () => {
    const example = { properties: { a: 1 } };
    expect(closedSchema({ properties: { a: {} }, additionalProperties: { type: 'string' }, examples: [example] })).toEqual({
      properties: { a: {} },
      additionalProperties: { type: 'string' },
      examples: [example],
    });
    expect(closedSchema({ const: example })).toEqual({ const: example });
  });
});
