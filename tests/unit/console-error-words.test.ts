/**
 * The console's words for the gateway's codes (services/api/console/js/error-words.js) cover every code: each code a
 * request can be refused with (shared/core/errors.ts), each code only the gateway gives a failed run
 * (RESERVED_ERROR_CODES), and each refusal of a draft's endpoint has its advice; none is for a code that is not.
 */
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../shared/core/errors.js';
import { RESERVED_ERROR_CODES } from '../../shared/core/manifest/types.js';

interface ErrorWords {
  RUN_ERRORS: Record<string, string>;
  REQUEST_ERRORS: Record<string, string>;
  DRAFT_ADVICE: Record<string, string>;
  SIGN_IN_ERRORS: Record<string, string>;
  wordsFor(list: Readonly<Record<string, string>>, code: string | null | undefined): string | undefined;
}

const words = (await import(new URL('../../services/api/console/js/error-words.js', import.meta.url).href)) as ErrorWords;

const sorted = (codes: readonly string[]) => [...codes].sort();

describe('the console’s error words', () => {
  it('has words for every code a request can be refused with, and for no other', () => {
    expect(sorted(Object.keys(words.REQUEST_ERRORS))).toEqual(sorted(ERROR_CODES));
    for (const code of ERROR_CODES) expect(words.REQUEST_ERRORS[code]?.trim(), code).toBeTruthy();
  });

  it('has words for every code only the gateway gives a failed run, and for no other', () => {
    expect(sorted(Object.keys(words.RUN_ERRORS))).toEqual(sorted(RESERVED_ERROR_CODES));
    for (const code of RESERVED_ERROR_CODES) expect(words.RUN_ERRORS[code]?.trim(), code).toBeTruthy();
  });

  it('has advice for every refusal of a draft’s endpoint', () => {
    const endpointCodes = ERROR_CODES.filter((c) => /^(endpoint_|credential_)/.test(c));
    expect(sorted(Object.keys(words.DRAFT_ADVICE))).toEqual(sorted(endpointCodes));
  });

  it('says nothing for an unknown code, or for a name every object has', () => {
    expect(words.wordsFor(words.REQUEST_ERRORS, 'no_such_code')).toBeUndefined();
    expect(words.wordsFor(words.REQUEST_ERRORS, 'constructor')).toBeUndefined();
    expect(words.wordsFor(words.SIGN_IN_ERRORS, null)).toBeUndefined();
    expect(words.wordsFor(words.SIGN_IN_ERRORS, 'denied')).toBe('You did not authorise Holon on GitHub.');
  });
});
