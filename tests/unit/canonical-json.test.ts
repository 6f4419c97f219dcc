/**
 * shared/core/canonical-json.ts against RFC 8785: the §3.2.2 example object, the §3.2.3 sorting example, the
 * Appendix B number samples (IEEE 754 bit patterns), the string escapes, the refusals (NaN, the infinities, lone
 * surrogates, non-JSON values), and a property against `canonicalize` (the RFC author's reference implementation).
 * The hash of an input without lone surrogates is pinned: stored input hashes do not change.
 */
import reference from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, inputHash } from '../../shared/core/canonical-json.js';

// The package is CommonJS (`module.exports = serialize`) with an ES-module declaration: its default import is the function.
const canonicalize = reference as unknown as (value: unknown) => string | undefined;

/** The double with this IEEE 754 bit pattern (16 hex digits). */
const double = (hex: string): number => {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
};

describe('RFC 8785 canonical JSON', () => {
  it('writes the §3.2.2 example exactly', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    );
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('sorts keys by UTF-16 code units (§3.2.3)', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
      '</script>': 'Browser Challenge',
    };
    const text = canonicalJson(input);
    // The keys in the order the RFC gives (read from the text: a parsed object lists "1" first whatever the order).
    const order = ['\r', '1', '</script>', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33'].map((k) => text.indexOf(`${JSON.stringify(k)}:`));
    expect(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1]!))).toBe(true);
    expect(text).toBe(
      '{"\\r":"Carriage Return","1":"One","</script>":"Browser Challenge","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('writes the Appendix B numbers in ECMAScript form', () => {
    const samples: Array<[string, string]> = [
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['ffefffffffffffff', '-1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['c340000000000000', '-9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['44b52d02c7e14af7', '1.0000000000000001e+23'],
      ['444b1ae4d6e2ef4e', '999999999999999700000'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['41b3de4355555553', '333333333.3333332'],
      ['41b3de4355555554', '333333333.33333325'],
      ['41b3de4355555555', '333333333.3333333'],
      ['41b3de4355555556', '333333333.3333334'],
      ['41b3de4355555557', '333333333.33333343'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2'],
    ];
    for (const [hex, text] of samples) expect(canonicalJson(double(hex)), hex).toBe(text);
    expect([0, -0, 1e21, 1e-7, 0.000001, Number('333333333.33333329'), 5e-324, 1.7976931348623157e308].map(canonicalJson)).toEqual([
      '0',
      '0',
      '1e+21',
      '1e-7',
      '0.000001',
      '333333333.3333333',
      '5e-324',
      '1.7976931348623157e+308',
    ]);
    expect(canonicalJson(9007199254740992)).toBe('9007199254740992');
    expect(canonicalJson(295147905179352830000)).toBe('295147905179352830000');
  });

  it('refuses NaN and the infinities (Appendix B: "error")', () => {
    for (const n of [Number.NaN, double('7fffffffffffffff'), Number.POSITIVE_INFINITY, double('7ff0000000000000'), Number.NEGATIVE_INFINITY]) {
      expect(() => canonicalJson(n)).toThrow(TypeError);
      expect(() => canonicalJson({ a: [n] })).toThrow(TypeError);
    }
  });

  it('escapes strings as §3.2.2.2 says: the short escapes, other controls in lowercase hex, the rest as is', () => {
    expect(canonicalJson('\b\t\n\f\r"\\')).toBe('"\\b\\t\\n\\f\\r\\"\\\\"');
    expect(canonicalJson('\u0000\u0001\u001f\u007f')).toBe('"\\u0000\\u0001\\u001f\u007f"');
    expect(canonicalJson('\u2028\u2029/<>&\u00e9\ud83d\ude00')).toBe('"\u2028\u2029/<>&\u00e9\ud83d\ude00"');
  });

  it('refuses a lone surrogate in a string or a key (I-JSON), and anything that is not JSON', () => {
    for (const bad of ['\ud800', 'a\udc00', '\ude00\ud83d', { '\udbff': 1 }, ['ok', { x: '\ud83d' }]]) expect(() => canonicalJson(bad)).toThrow(TypeError);
    for (const bad of [undefined, () => 1, Symbol('s'), 1n, [undefined]]) expect(() => canonicalJson(bad)).toThrow(TypeError);
    // A field whose value is undefined is left out, as JSON.stringify leaves it out.
    expect(canonicalJson({ b: 1, a: undefined })).toBe('{"b":1}');
  });

  it('agrees with the reference implementation on any JSON value', () => {
    const json = fc.jsonValue({ stringUnit: 'grapheme', maxDepth: 4 });
    fc.assert(
      fc.property(json, (value) => {
        const text = canonicalJson(value);
        expect(text).toBe(canonicalize(value));
        // Canonicalizing is idempotent: the text parsed back canonicalizes to itself.
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { numRuns: 500 },
    );
    fc.assert(fc.property(fc.double(), (n) => (Number.isFinite(n) ? canonicalJson(n) === canonicalize(n) : throwsTypeError(() => canonicalJson(n)))));
  });

  it('keeps the input hashes stored before (no lone surrogate, no NaN: the same text as ever)', () => {
    const input = { text: 'hi', n: [1, 2.5, -0, 1e21], nested: { b: null, a: true, é: '\u2028\u001f' } };
    expect(inputHash(input)).toBe('0686f8dd5e7fcbf34d2674be5c1740b3ac6ed90be70ddfc0e6184b598d69a254');
  });
});

function throwsTypeError(f: () => unknown): boolean {
  try {
    f();
    return false;
  } catch (e) {
    return e instanceof TypeError;
  }
}
