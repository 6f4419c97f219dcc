/**
 * The catalogue's search documents in Postgres (shared/catalogue/search-documents.ts, migration 022): a search sends
 * Postgres its words, never the catalogue's documents, so what it sends does not grow with the listings; a published
 * version is searchable from every API process; a yank (one version, or an account disabled with its agents) stops it
 * matching at its commit, in every process, and takes its document out of the table; listed versions without a
 * document (a database upgraded in place) are written by the next API process to start.
 */
import type { Knex } from 'knex';
import { expect, test } from 'vitest';
import { validateManifest } from '../../shared/core/manifest/validate.js';
import { matchText } from '../../shared/catalogue/search-documents.js';
import { disableAccount, yankVersion } from '../../shared/publishing/moderation.js';
import { recordPublished } from '../../shared/registry/published.js';
import type { ServiceContext } from '../../shared/context.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { query, send, signUp } from '../support/http.js';
import { poll } from '../support/poll.js';

/** A listing with a description of about 8 KB (the manifest's most) of words no other listing holds, and `extra` words. */
function listing(id: string, extra = '') {
  const words = Array.from({ length: 1100 }, (_, i) => `${id.replace(/\W/g, '')}w${i}`).join(' ');
  const v = validateManifest({
    id,
    version: '1.0.0',
    summary: `${id}, published for a search test`,
    description: `${extra} ${words}`.slice(0, 8000),
    capabilities: ['text.echo'],
    license: 'proprietary',
    interface: { input: { type: 'object' }, output: { type: 'object' } },
    pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
    runtime: { kind: 'webhook', endpoint: 'https://agents.example/echo', limits: { timeout_s: 10 } },
  });
  if (!v.ok) throw new Error(`invalid test manifest: ${JSON.stringify(v.problems)}`);
  return v.manifest;
}

async function publishMany(ctx: ServiceContext, author: string, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) expect(await recordPublished(ctx, { manifest: listing(`${author}/filler-${i}`), author })).toBe('listed');
}

/** What `work` sends Postgres through `db`: every query's text and parameters, in bytes, and the longest parameter. */
async function sent(db: Knex, work: () => Promise<unknown>): Promise<{ bytes: number; longest: number }> {
  let bytes = 0;
  let longest = 0;
  const listener = (q: { sql: string; bindings?: unknown[] }) => {
    bytes += Buffer.byteLength(q.sql);
    for (const b of q.bindings ?? []) {
      const n = Buffer.byteLength(typeof b === 'string' ? b : (JSON.stringify(b) ?? ''));
      bytes += n;
      longest = Math.max(longest, n);
    }
  };
  db.on('query', listener);
  try {
    await work();
  } finally {
    db.off('query', listener);
  }
  return { bytes, longest };
}

const found = async (g: TestGateway, q: string): Promise<string[]> => {
  const r = await send(g.url, 'GET', `/v0/agents${query({ q })}`);
  expect(r.status).toBe(200);
  return (r.body.agents as Array<{ id: string }>).map((a) => a.id);
};

const documentsOf = (g: TestGateway, id: string) => g.db.knex('search_documents').where({ agent_id: id }).select('version', 'origin');

test('a search sends Postgres its words, never the documents: the same bytes with 4 listings and with 24', async () => {
  // The API alone: no worker's sweep shares the connection pool whose queries are counted.
  await useAudited(await startTestGateway({ hosted: true, roles: ['api'] }), async (g) => {
    await signUp(g.url, 'bob');
    const ctx = g.gw.context;
    expect(await recordPublished(ctx, { manifest: listing('bob/quokka', 'counts the quokkas of an island'), author: 'bob' })).toBe('listed');
    await publishMany(ctx, 'bob', 0, 3);
    expect(await found(g, 'quokkas island')).toEqual(['bob/quokka']);
    const few = await sent(ctx.db, () => found(g, 'quokkas island'));

    await publishMany(ctx, 'bob', 3, 23);
    expect(await found(g, 'quokkas island')).toEqual(['bob/quokka']);
    const many = await sent(ctx.db, () => found(g, 'quokkas island'));
    expect(many.bytes).toBe(few.bytes);
    // No parameter carries a document (each description here is ~8 KB): the words, and the found version's keys.
    expect(many.longest).toBeLessThan(200);
    // A filler's own words find it, from its document in the table.
    expect(await found(g, 'bobfiller22w10')).toEqual(['bob/filler-22']);
  });
});

test('published in one API process, found by another; a yank stops it matching at its commit, in every process', async () => {
  await useAudited(await startTestGateway({ hosted: true }), async (g) => {
    const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true });
    try {
      await signUp(g.url, 'bob');
      expect(await recordPublished(g.gw.context, { manifest: listing('bob/quokka', 'counts the quokkas of an island'), author: 'bob' })).toBe('listed');
      await poll(async () => (await found(other, 'quokkas')).includes('bob/quokka'), { what: 'bob/quokka found by the other API process' });
      expect(await documentsOf(g, 'bob/quokka')).toEqual([{ version: '1.0.0', origin: 'published' }]);

      const candidate = other.gw.context.registry.get('bob/quokka', '1.0.0')!;
      expect((await matchText(other.gw.context.db, [candidate], 'quokkas')).has(candidate)).toBe(true);
      await yankVersion(g.gw.context, 'bob/quokka', '1.0.0', { reason: 'test' });
      // Even offered as a candidate by a process that has not heard of the yank, it no longer matches.
      expect((await matchText(other.gw.context.db, [candidate], 'quokkas')).has(candidate)).toBe(false);
      expect(await documentsOf(g, 'bob/quokka')).toEqual([]);
      expect(await found(g, 'quokkas')).toEqual([]);
      expect(await found(other, 'quokkas')).toEqual([]);
    } finally {
      await other.stop();
    }
  });
});

test('an account disabled with its agents: their documents leave the table and no search finds them', async () => {
  await useAudited(await startTestGateway({ hosted: true }), async (g) => {
    await signUp(g.url, 'carol');
    await signUp(g.url, 'dave');
    const ctx = g.gw.context;
    expect(await recordPublished(ctx, { manifest: listing('carol/wombat', 'digs wombat burrows'), author: 'carol' })).toBe('listed');
    expect(await recordPublished(ctx, { manifest: listing('dave/wombat', 'counts wombat burrows'), author: 'dave' })).toBe('listed');
    expect(await found(g, 'wombat burrows')).toEqual(expect.arrayContaining(['carol/wombat', 'dave/wombat']));
    const candidates = ['carol/wombat', 'dave/wombat'].map((id) => ctx.registry.get(id, '1.0.0')!);

    await disableAccount(ctx, 'carol', { reason: 'test', yankAgents: true });
    expect(await documentsOf(g, 'carol/wombat')).toEqual([]);
    expect(await found(g, 'wombat burrows')).toEqual(['dave/wombat']);
    const matched = await matchText(ctx.db, candidates, 'wombat burrows');
    expect([...matched.keys()].map((a) => a.manifest.id)).toEqual(['dave/wombat']);
  });
});

test('listed versions without a document (a database upgraded in place) are written by the next API process to start', async () => {
  await useAudited(await startTestGateway({ hosted: true }), async (g) => {
    await signUp(g.url, 'bob');
    expect(await recordPublished(g.gw.context, { manifest: listing('bob/quokka', 'counts the quokkas of an island'), author: 'bob' })).toBe('listed');
    // As before migration 022: no documents at all, shipped or published.
    await g.db.knex('search_documents').delete();
    const late = await startTestGateway({ beside: g, roles: ['api'], hosted: true });
    try {
      expect(await documentsOf(g, 'bob/quokka')).toEqual([{ version: '1.0.0', origin: 'published' }]);
      expect(await found(late, 'quokkas')).toEqual(['bob/quokka']);
      expect(await found(late, 'count words')).toContain('examples/word-count');
    } finally {
      await late.stop();
    }
  });
});
