/** Schema inference for draft listings (shared/core/schema-inference.ts): types, required keys, merged arrays. */
import { expect, test } from 'vitest';
import { inferSchema, inferSchemaWithin } from '../../shared/core/schema-inference.js';
import { createAjv } from '../../shared/core/schema/ajv.js';

test('scalars: their types, integers told from numbers', () => {
  expect(inferSchema(['a'])).toEqual({ type: 'string' });
  expect(inferSchema([3])).toEqual({ type: 'integer' });
  expect(inferSchema([3.5])).toEqual({ type: 'number' });
  expect(inferSchema([3, 3.5])).toEqual({ type: 'number' });
  expect(inferSchema([true])).toEqual({ type: 'boolean' });
  expect(inferSchema([null])).toEqual({ type: 'null' });
  expect(inferSchema([])).toEqual({});
});

test('objects: every key a property, keys present everywhere required, sorted', () => {
  expect(inferSchema([{ b: 1, a: 'x', n: null }])).toEqual({
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'integer' }, n: { type: 'null' } },
    required: ['a', 'b', 'n'],
  });
  expect(inferSchema([{}])).toEqual({ type: 'object', properties: {} });
});

test('arrays of objects are merged: union of properties, intersection of required keys', () => {
  const schema = inferSchema([
    {
      rows: [
        { id: 1, name: 'a' },
        { id: 2.5, tags: ['x'] },
        { id: 3, name: null },
      ],
      empty: [],
    },
  ]);
  expect(schema).toEqual({
    type: 'object',
    properties: {
      empty: { type: 'array' },
      rows: {
        type: 'array',
        items: {
          type: 'object',
          properties: { id: { type: 'number' }, name: { type: ['null', 'string'] }, tags: { type: 'array', items: { type: 'string' } } },
          required: ['id'],
        },
      },
    },
    required: ['empty', 'rows'],
  });
});

test('mixed types at one place are listed; object and array keywords still apply', () => {
  expect(inferSchema([[1, 'a', { k: true }, [null]]])).toEqual({
    type: 'array',
    items: { type: ['array', 'integer', 'object', 'string'], properties: { k: { type: 'boolean' } }, required: ['k'], items: { type: 'null' } },
  });
});

test('a key such as __proto__ stays a property', () => {
  const value = JSON.parse('{"__proto__": {"x": 1}}');
  const schema = inferSchema([value]) as { properties: Record<string, unknown> };
  expect(Object.keys(schema.properties)).toEqual(['__proto__']);
  expect(Object.getPrototypeOf(schema.properties)).toBe(Object.prototype);
});

test('depth is bounded; a size bound makes the schema shallower', () => {
  let deep: unknown = 'leaf';
  for (let i = 0; i < 5000; i++) deep = [deep];
  const bounded = inferSchema([deep], { maxDepth: 3 });
  expect(bounded).toEqual({ type: 'array', items: { type: 'array', items: { type: 'array', items: {} } } });
  const wide = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`key_${i}`, { inner: { value: i } }]));
  const small = inferSchemaWithin([wide], 64 * 1024);
  expect(Buffer.byteLength(JSON.stringify(small))).toBeLessThanOrEqual(64 * 1024);
  expect(inferSchemaWithin([wide], 10)).toEqual({});
});

test('the schema accepts the values it was inferred from', () => {
  const ajv = createAjv();
  const values = [{ a: [1, { b: 'c' }, null], d: { e: [[1.5], []] } }, [], 'x', 0, [{ p: 1 }, { q: 2 }]];
  for (const v of values) expect(ajv.compile(inferSchema([v]))(v)).toBe(true);
  const together = inferSchema(values);
  for (const v of values) expect(ajv.compile(together)(v)).toBe(true);
});
