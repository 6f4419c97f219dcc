/** The pure half of catalogue search (shared/catalogue/text-search.ts): what Postgres is given to read, and the order. */
import { describe, expect, test } from 'vitest';
import { byRelevance, documentParts, MAX_QUERY_WORDS, queryWords, searchText, type TextMatch } from '../../shared/catalogue/text-search.js';
import type { AgentVersion } from '../../shared/registry/agent-version.js';
import { buildManifest } from '../support/manifest-builder.js';

describe('searchText', () => {
  test('ids and capabilities become words; what text cannot hold becomes a space', () => {
    expect(searchText('examples/word-count text.translate')).toBe('examples word-count text translate');
    expect(searchText('a\u0000b\u0007c\u009fd')).toBe('a b c d');
    expect(searchText('x\ud800y\udc00z')).toBe('x y z');
    expect(searchText('ok 😀 日本語')).toBe('ok 😀 日本語');
  });
});

describe('queryWords', () => {
  test('split at white space, case folded, distinct, at most MAX_QUERY_WORDS', () => {
    expect(queryWords('  Profile this CSV\tcsv\nPROFILE ')).toEqual(['profile', 'this', 'csv']);
    expect(queryWords('holon-labs/csv-profile')).toEqual(['holon-labs', 'csv-profile']);
    expect(queryWords('   ')).toEqual([]);
    expect(queryWords(Array.from({ length: 100 }, (_, i) => `w${i}`).join(' '))).toHaveLength(MAX_QUERY_WORDS);
  });
});

describe('documentParts', () => {
  test('A: id and capabilities; B: summary; C: description and the strings of the examples', () => {
    const m = buildManifest({
      id: 'acme/pdf-tables',
      capabilities: ['extraction.table', 'data.csv-export'],
      summary: 'Extracts tables',
      description: 'From PDF files.',
      interface: {
        input: { type: 'object' },
        output: { type: 'object' },
        errors: {},
        examples: [
          { input: { file: 'invoice.pdf', pages: [1, 'two'] }, output: { rows: 3 } },
          { input: { file: 'x' }, error: 'bad_pdf' },
        ],
      },
    });
    const [a, b, c] = documentParts(m);
    expect(a).toBe('acme pdf-tables extraction table data csv-export');
    expect(b).toBe('Extracts tables');
    expect(c).toBe('From PDF files  invoice pdf two x bad_pdf');
  });

  test('a description is cut at 4 000 characters, the examples at 2 000: a few KB per version', () => {
    const m = buildManifest({
      description: 'd'.repeat(30_000),
      interface: { input: {}, output: {}, errors: {}, examples: Array.from({ length: 50 }, () => ({ input: { text: 'e'.repeat(500) } })) },
    });
    const [, , c] = documentParts(m);
    expect(c.length).toBe(4_000 + 1 + 2_000);
  });
});

describe('byRelevance', () => {
  const agent = (id: string): AgentVersion => ({ manifest: buildManifest({ id }), origin: 'shipped' });
  test('the exact id first, then rank descending, then the tie-break, and stable', () => {
    const [a, b, c, d] = ['x/a', 'x/b', 'x/c', 'x/d'].map(agent) as [AgentVersion, AgentVersion, AgentVersion, AgentVersion];
    const matches = new Map<AgentVersion, TextMatch>([
      [a, { rank: 0.2, exact: false }],
      [b, { rank: 0.9, exact: false }],
      [c, { rank: 0.2, exact: false }],
      [d, { rank: 0, exact: true }],
    ]);
    const cost = new Map([
      [a, 5],
      [c, 1],
    ]);
    const ordered = [a, b, c, d].sort(
      byRelevance(
        matches,
        (x: AgentVersion) => x,
        (x, y) => (cost.get(x) ?? 0) - (cost.get(y) ?? 0),
      ),
    );
    expect(ordered.map((x) => x.manifest.id)).toEqual(['x/d', 'x/b', 'x/c', 'x/a']);
    expect([a, c].sort(byRelevance(matches, (x: AgentVersion) => x)).map((x) => x.manifest.id)).toEqual(['x/a', 'x/c']);
  });
});
