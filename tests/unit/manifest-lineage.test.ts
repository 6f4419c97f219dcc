/**
 * Lineage and fork rules of a manifest (shared/core/manifest/rules/lineage.ts, spec/manifest.md §8): forked_from,
 * royalties against the upstream's fork terms, chains of forks.
 */
import { describe, expect, it } from 'vitest';
import { check, expectProblem, expectValid, upstream } from '../support/manifest-checks.js';

describe('lineage and forks', () => {
  it('checks the syntax of forked_from and royalty', () => {
    for (const bad of ['acme/pdf-tables', 'acme/pdf-tables@^2.0.1', 'acme/pdf-tables@v2.0.1', 'acme/pdf-tables@2.0', 'ACME/x@1.0.0']) {
      expectProblem(
        check((d) => (d.lineage.forked_from = bad)),
        '$.lineage.forked_from',
        'exact version',
      );
    }
    expectProblem(
      check((d) => (d.lineage.royalty = '1')),
      '$.lineage.royalty',
      'below 1',
    );
    expectProblem(
      check((d) => (d.lineage.royalty = '0.12345')),
      '$.lineage.royalty',
      'at most 4',
    );
    expectProblem(
      check((d) => (d.lineage.royalty = 0.15)),
      '$.lineage.royalty',
      'JSON number',
    );
    expectProblem(
      check((d) => delete d.lineage.royalty),
      '$.lineage.royalty',
      'required',
    );
    expectValid(check((d) => (d.lineage.royalty = '0.9999')));
    expectValid(check((d) => (d.lineage.royalty = '0')));
  });

  it('refuses a fork of itself', () => {
    expectProblem(
      check((d) => (d.lineage.forked_from = 'lena/tables-fr@1.0.0')),
      '$.lineage.forked_from',
      'itself',
    );
  });

  it('checks forks: min_royalty in [0, 1) with 4 decimals, allowed a boolean', () => {
    expectProblem(
      check((d) => (d.forks.min_royalty = '1.0')),
      '$.forks.min_royalty',
      'below 1',
    );
    expectProblem(
      check((d) => (d.forks.min_royalty = '0.00001')),
      '$.forks.min_royalty',
      'at most 4',
    );
    expectProblem(
      check((d) => (d.forks.allowed = 'no')),
      '$.forks.allowed',
      'boolean',
    );
    const r = check((d) => (d.forks = { allowed: false }));
    expectValid(r);
    if (r.ok) expect(r.manifest.forks).toEqual({ minRoyalty: { num: 0n, den: 1n }, allowed: false });
  });

  it('asks resolveUpstream about the exact upstream version', () => {
    const seen: string[] = [];
    const r = check(() => {}, {
      resolveUpstream: (id, version) => {
        seen.push(`${id}@${version}`);
        return upstream();
      },
    });
    expectValid(r);
    expect(seen).toEqual(['acme/pdf-tables@2.0.1']);
  });

  it('refuses an upstream that is not listed', () => {
    expectProblem(
      check(() => {}, { resolveUpstream: () => null }),
      '$.lineage.forked_from',
      'is not a listed agent version',
    );
  });

  it('refuses an upstream that does not allow forks', () => {
    const r = check(() => {}, { resolveUpstream: () => upstream({ forks: { minRoyalty: { num: 0n, den: 1n }, allowed: false } }) });
    expectProblem(r, '$.lineage.forked_from', 'does not allow forks');
  });

  it("enforces the upstream's min_royalty, naming both numbers", () => {
    const min = (num: bigint, den: bigint) => ({ resolveUpstream: () => upstream({ forks: { minRoyalty: { num, den }, allowed: true } }) });
    const r = check(() => {}, min(20n, 100n));
    expectProblem(r, '$.lineage.royalty', /0\.15.*0\.2/);
    expectValid(check(() => {}, min(15n, 100n)));
    expectValid(check(() => {}, min(1499n, 10000n)));
    expectProblem(
      check(() => {}, min(1501n, 10000n)),
      '$.lineage.royalty',
      '0.1501',
    );
  });

  it('refuses a loop', () => {
    const r = check(() => {}, { resolveUpstream: () => upstream({ chain: ['bob/base@1.0.0', 'lena/tables-fr@0.9.0'], lineageDepth: 3 }) });
    expectProblem(r, '$.lineage.forked_from', 'loop');
  });

  it('refuses a chain longer than 8 levels', () => {
    // lineageDepth: levels of the upstream's own chain, counting the upstream (1 = not a fork).
    expectValid(check(() => {}, { resolveUpstream: () => upstream({ lineageDepth: 7 }) }));
    expectProblem(
      check(() => {}, { resolveUpstream: () => upstream({ lineageDepth: 8 }) }),
      '$.lineage.forked_from',
      'at most 8',
    );
    const chainOf = (n: number) => Array.from({ length: n }, (_, i) => `ns${i}/agent@1.0.0`);
    expectValid(check(() => {}, { resolveUpstream: () => upstream({ chain: chainOf(6) }) }));
    expectProblem(
      check(() => {}, { resolveUpstream: () => upstream({ chain: chainOf(7) }) }),
      '$.lineage.forked_from',
      '9 levels',
    );
  });

  it('checks only the syntax without resolveUpstream', () => {
    expectValid(check(() => {}));
  });
});
