/**
 * The secret-strength rule (shared/core/secret-strength.ts): what `openssl rand` makes always passes; a short
 * secret, few distinct characters, a long run of one character, a repeated pattern or too little entropy never does,
 * and no answer repeats the secret.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_RUN, MIN_DISTINCT, MIN_SECRET_LENGTH, secretWeakness } from '../../shared/core/secret-strength.js';

const bytes = (min: number) => fc.uint8Array({ minLength: min, maxLength: 64 }).map((b) => Buffer.from(b));

describe('secretWeakness', () => {
  it('passes what openssl rand -base64 24+, -hex 16+ and base64url of 24+ bytes make', () => {
    fc.assert(
      fc.property(bytes(24), (b) => secretWeakness(b.toString('base64')) === null),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(bytes(24), (b) => secretWeakness(b.toString('base64url')) === null),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(bytes(16), (b) => secretWeakness(b.toString('hex')) === null),
      { numRuns: 2000 },
    );
    expect(secretWeakness(randomBytes(32).toString('base64'))).toBeNull();
  });

  it('refuses a secret shorter than the minimum', () => {
    fc.assert(fc.property(fc.string({ maxLength: MIN_SECRET_LENGTH - 1 }), (s) => /at least 32 are needed/.test(secretWeakness(s) ?? '')));
  });

  it('refuses fewer distinct characters than the minimum, whatever the length', () => {
    const few = fc.array(fc.constantFrom(...'abcdefg'.slice(0, MIN_DISTINCT - 1)), { minLength: MIN_SECRET_LENGTH, maxLength: 200 }).map((a) => a.join(''));
    fc.assert(fc.property(few, (s) => secretWeakness(s) !== null));
    expect(secretWeakness('a'.repeat(32))).toBe('it has only 1 distinct characters');
  });

  it('refuses a run of one character as long as MAX_RUN, wherever it is', () => {
    fc.assert(
      fc.property(bytes(24), fc.nat(), fc.constantFrom(...'xyz'), (b, at, c) => {
        const s = b.toString('base64');
        const i = at % s.length;
        const weak = secretWeakness(`${s.slice(0, i)}${c.repeat(MAX_RUN)}${s.slice(i)}`);
        return weak !== null && /in a row|entropy|distinct/.test(weak);
      }),
    );
  });

  it('refuses a shorter pattern repeated, and too little entropy by its own characters', () => {
    fc.assert(
      fc.property(bytes(4), fc.integer({ min: 2, max: 8 }), (b, times) => {
        const unit = b.toString('base64url').slice(0, 16);
        const s = unit.repeat(Math.max(times, Math.ceil(MIN_SECRET_LENGTH / unit.length) + 1));
        return secretWeakness(s) !== null;
      }),
    );
    expect(secretWeakness('abcdefgh'.repeat(4))).toBe('it repeats a pattern of 8 characters');
    // Eight characters, one of them nearly everywhere: no run, no pattern, too little entropy.
    const uneven = `${'bcdefgh'
      .split('')
      .map((c) => `aaaaaaa${c}`)
      .join('')}aaaaa`;
    expect(secretWeakness(uneven)).toMatch(/bits of entropy/);
  });

  it('never repeats the secret in its answer', () => {
    fc.assert(fc.property(fc.string({ minLength: 4, maxLength: 80 }), (s) => !(secretWeakness(s) ?? '').includes(s)));
  });
});
