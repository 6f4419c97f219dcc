/**
 * tests/support/independent-verifier.ts: the third-party verifier, against fixtures built here from node:crypto, jose
 * and canonicalize alone (never the project's own signing or Merkle code):
 *
 * - Key set: well-formed sets pass; a kid that is not the RFC 7638 thumbprint, a wrong member, a duplicate kid fail.
 * - Receipts: a detached JWS (jose CompactSign with its payload part removed) over the RFC 8785 bytes verifies; a
 *   changed, added or removed field, one micro-unit in an amount, another key, a wrong typ, an attached JWS fail;
 *   children are verified recursively and a tampered child fails the tree with its path.
 * - Merkle: for every size 1..40, every leaf's inclusion proof (RFC 6962 PATH) and every consistency proof (RFC 6962
 *   PROOF/SUBPROOF), built here naively, verify, and swapped leaves or a flipped bit fail; fast-check does the same
 *   on random trees of up to 200 leaves. Malformed input is false, never a throw.
 * - Checkpoints: a note signed here verifies; tampering, unknown keys, bad sizes and roots, a missing blank line fail;
 *   an extra signature line from another key is ignored.
 * - verifyReceiptProof end to end, one failure per check.
 */
import { createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import reference from 'canonicalize';
import fc from 'fast-check';
import { CompactSign, calculateJwkThumbprint } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  EMPTY_ROOT,
  type KeySet,
  type KeySetKey,
  leafHash,
  merkleRoot,
  noteKeyId,
  nodeHash,
  receiptLeafHash,
  verifyCheckpointNote,
  verifyConsistency,
  verifyDetachedJws,
  verifyInclusion,
  verifyKeySet,
  verifyReceiptProof,
  verifyReceiptSignature,
  verifyReceiptTree,
} from '../support/independent-verifier.js';

const canonicalize = reference as unknown as (v: unknown) => string | undefined;

// ---------------------------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------------------------

interface TestKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  kid: string;
  entry: KeySetKey;
  raw: Buffer;
}

async function makeKey(extra: Partial<KeySetKey> = {}): Promise<TestKey> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string };
  const kid = await calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x });
  const entry: KeySetKey = { kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid, alg: 'EdDSA', use: 'sig', ...extra };
  return { publicKey, privateKey, kid, entry, raw: Buffer.from(jwk.x, 'base64url') };
}

/** The test's own reading of the signed bytes: RFC 8785 of the receipt without `signature` and `children`. */
function signedBytes(receipt: Record<string, unknown>): Buffer {
  const { signature, children, ...rest } = receipt;
  return Buffer.from(canonicalize(rest)!, 'utf8');
}

async function detachedJws(payload: Uint8Array, key: TestKey, header: Record<string, unknown>): Promise<string> {
  const compact = await new CompactSign(payload).setProtectedHeader(header as { alg: string }).sign(key.privateKey);
  const [h, , s] = compact.split('.');
  return `${h}..${s}`;
}

async function signReceipt(
  body: Record<string, unknown>,
  key: TestKey,
  options: { children?: unknown[]; header?: Record<string, unknown> } = {},
): Promise<Record<string, unknown>> {
  const header = options.header ?? { alg: 'EdDSA', kid: key.kid, typ: 'holon-receipt' };
  const signature = await detachedJws(signedBytes(body), key, header);
  return { ...body, signature, ...(options.children === undefined ? {} : { children: options.children }) };
}

const BODY = {
  id: 'rcpt_01J0000000000000000000000',
  kind: 'call',
  caller: 'agent_caller',
  callee: 'agent_callee',
  tool: 'search',
  amount: '0.010000',
  currency: 'USD',
  status: 'succeeded',
  created_at: '2026-01-02T03:04:05.678Z',
  parent: null,
  usage: { input_tokens: 120, output_tokens: 48, ratio: 0.5 },
  tags: ['a', 'ü', '</script>'],
};

let keyA: TestKey;
let keyB: TestKey;
let keySet: KeySet;

beforeAll(async () => {
  keyA = await makeKey();
  keyB = await makeKey();
  keySet = { keys: [keyA.entry] };
});

// ---------------------------------------------------------------------------------------------------------------
// Key set
// ---------------------------------------------------------------------------------------------------------------

describe('verifyKeySet', () => {
  it('accepts the documented key set, a retired key included', async () => {
    const retired = await makeKey({ retired_at: '2026-03-01T00:00:00Z' });
    expect(await verifyKeySet({ keys: [keyA.entry] })).toEqual({ ok: true });
    expect(await verifyKeySet({ keys: [keyA.entry, retired.entry] })).toEqual({ ok: true });
  });

  it('refuses a kid that is not the RFC 7638 thumbprint, and other departures', async () => {
    expect(await verifyKeySet({ keys: [{ ...keyA.entry, kid: keyB.kid }] })).toEqual({ ok: false, reason: 'kid is not the key thumbprint' });
    expect(await verifyKeySet({ keys: [keyA.entry, keyA.entry] })).toEqual({ ok: false, reason: 'duplicate kid' });
    expect(await verifyKeySet({ keys: [{ ...keyA.entry, d: 'secret' }] })).toEqual({ ok: false, reason: 'key member d' });
    expect(await verifyKeySet({ keys: [{ ...keyA.entry, alg: 'ES256' }] })).toEqual({ ok: false, reason: 'key alg' });
    expect(await verifyKeySet({ keys: [{ ...keyA.entry, crv: 'X25519' }] })).toEqual({ ok: false, reason: 'key crv' });
    expect(await verifyKeySet({ keys: [{ ...keyA.entry, x: keyA.entry.x.slice(2) }] })).toEqual({ ok: false, reason: 'key x' });
    expect(await verifyKeySet({ keys: [{ ...keyA.entry, use: 'enc' }] })).toEqual({ ok: false, reason: 'key use' });
    expect(await verifyKeySet({ keys: [{ ...keyA.entry, retired_at: 'yesterday' }] })).toEqual({ ok: false, reason: 'key retired_at' });
    expect(await verifyKeySet({ keys: [] })).toEqual({ ok: false, reason: 'key set keys' });
    expect(await verifyKeySet(null)).toEqual({ ok: false, reason: 'key set is not an object' });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Receipt signatures
// ---------------------------------------------------------------------------------------------------------------

describe('verifyReceiptSignature', () => {
  it('verifies a receipt signed with a detached JWS over its RFC 8785 bytes, whatever the field order', async () => {
    const receipt = await signReceipt(BODY, keyA);
    expect(String(receipt.signature)).toMatch(/^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/);
    expect(await verifyReceiptSignature(receipt, keySet)).toEqual({ ok: true });
    const reordered = Object.fromEntries(Object.entries(receipt).reverse());
    expect(await verifyReceiptSignature(reordered, keySet)).toEqual({ ok: true });
    // Children are outside the signed bytes: adding some does not touch the parent's own signature.
    expect(await verifyReceiptSignature({ ...receipt, children: [] }, keySet)).toEqual({ ok: true });
  });

  it('fails on a changed, added or removed field, and on one micro-unit', async () => {
    const receipt = await signReceipt(BODY, keyA);
    const bad = { ok: false, reason: 'signature' };
    expect(await verifyReceiptSignature({ ...receipt, amount: '0.010001' }, keySet)).toEqual(bad);
    expect(await verifyReceiptSignature({ ...receipt, status: 'failed' }, keySet)).toEqual(bad);
    expect(await verifyReceiptSignature({ ...receipt, usage: { ...BODY.usage, output_tokens: 49 } }, keySet)).toEqual(bad);
    expect(await verifyReceiptSignature({ ...receipt, extra: true }, keySet)).toEqual(bad);
    const { tool, ...removed } = receipt;
    expect(await verifyReceiptSignature(removed, keySet)).toEqual(bad);
    // null is a value: dropping a null field changes the bytes too.
    const { parent, ...noParent } = receipt;
    expect(await verifyReceiptSignature(noParent, keySet)).toEqual(bad);
  });

  it('fails with another key, a wrong typ or alg, an attached JWS, or no signature', async () => {
    // Signed by B, B not in the key set.
    expect(await verifyReceiptSignature(await signReceipt(BODY, keyB), keySet)).toEqual({ ok: false, reason: 'unknown key' });
    // Signed by B but naming A's kid.
    const forged = await signReceipt(BODY, keyB, { header: { alg: 'EdDSA', kid: keyA.kid, typ: 'holon-receipt' } });
    expect(await verifyReceiptSignature(forged, keySet)).toEqual({ ok: false, reason: 'signature' });
    // A mandate's signature is not a receipt's.
    const mandateTyp = await signReceipt(BODY, keyA, { header: { alg: 'EdDSA', kid: keyA.kid, typ: 'holon-mandate' } });
    expect(await verifyReceiptSignature(mandateTyp, keySet)).toEqual({ ok: false, reason: 'typ' });
    const noTyp = await signReceipt(BODY, keyA, { header: { alg: 'EdDSA', kid: keyA.kid } });
    expect(await verifyReceiptSignature(noTyp, keySet)).toEqual({ ok: false, reason: 'typ' });
    const extraHeader = await signReceipt(BODY, keyA, { header: { alg: 'EdDSA', kid: keyA.kid, typ: 'holon-receipt', cty: 'json' } });
    expect(await verifyReceiptSignature(extraHeader, keySet)).toEqual({ ok: false, reason: 'header' });
    const header = Buffer.from(JSON.stringify({ alg: 'HS256', kid: keyA.kid, typ: 'holon-receipt' })).toString('base64url');
    const [, , sig] = String((await signReceipt(BODY, keyA)).signature).split('.');
    expect(await verifyReceiptSignature({ ...BODY, signature: `${header}..${sig}` }, keySet)).toEqual({ ok: false, reason: 'alg' });
    // Attached: the payload part left in.
    const attached = await new CompactSign(signedBytes(BODY)).setProtectedHeader({ alg: 'EdDSA', kid: keyA.kid, typ: 'holon-receipt' }).sign(keyA.privateKey);
    expect(await verifyReceiptSignature({ ...BODY, signature: attached }, keySet)).toEqual({ ok: false, reason: 'not detached' });
    expect(await verifyReceiptSignature({ ...BODY, signature: null }, keySet)).toEqual({ ok: false, reason: 'unsigned' });
    expect(await verifyReceiptSignature({ ...BODY, signature: 'abc' }, keySet)).toEqual({ ok: false, reason: 'malformed jws' });
    expect(await verifyReceiptSignature('receipt', keySet)).toEqual({ ok: false, reason: 'receipt is not an object' });
  });

  it('checks the key-set entry it uses: a kid that is not its thumbprint fails', async () => {
    const receipt = await signReceipt(BODY, keyA);
    const lying = { keys: [{ ...keyB.entry, kid: keyA.kid }] };
    expect(await verifyReceiptSignature(receipt, lying)).toEqual({ ok: false, reason: 'kid is not the key thumbprint' });
    // A retired key still verifies what it signed.
    const retired = { keys: [keyB.entry, { ...keyA.entry, retired_at: '2026-03-01T00:00:00Z' }] };
    expect(await verifyReceiptSignature(receipt, retired)).toEqual({ ok: true });
  });
});

describe('verifyReceiptTree', () => {
  it('verifies children recursively and names a tampered child', async () => {
    const grandchild = await signReceipt({ ...BODY, id: 'rcpt_gc', parent: 'rcpt_c1', amount: '0.001000' }, keyA);
    const child0 = await signReceipt({ ...BODY, id: 'rcpt_c0', parent: BODY.id, amount: '0.002000' }, keyA);
    const child1 = await signReceipt({ ...BODY, id: 'rcpt_c1', parent: BODY.id, amount: '0.003000' }, keyA, { children: [grandchild] });
    const root = await signReceipt(BODY, keyA, { children: [child0, child1] });
    expect(await verifyReceiptTree(root, keySet)).toEqual({ ok: true });

    const tamperedChild = { ...root, children: [{ ...child0, amount: '0.002001' }, child1] };
    expect(await verifyReceiptSignature(tamperedChild, keySet)).toEqual({ ok: true });
    expect(await verifyReceiptTree(tamperedChild, keySet)).toEqual({ ok: false, reason: 'children[0]: signature' });

    const tamperedGrandchild = { ...root, children: [child0, { ...child1, children: [{ ...grandchild, callee: 'someone_else' }] }] };
    expect(await verifyReceiptTree(tamperedGrandchild, keySet)).toEqual({ ok: false, reason: 'children[1].children[0]: signature' });

    const childByB = await signReceipt({ ...BODY, id: 'rcpt_b', parent: BODY.id }, keyB);
    expect(await verifyReceiptTree({ ...root, children: [childByB] }, keySet)).toEqual({ ok: false, reason: 'children[0]: unknown key' });
    expect(await verifyReceiptTree({ ...root, children: { 0: child0 } }, keySet)).toEqual({ ok: false, reason: 'children is not an array' });
    expect(await verifyReceiptTree({ ...root, amount: '0.010001' }, keySet)).toEqual({ ok: false, reason: 'signature' });
  });
});

describe('verifyDetachedJws (mandates)', () => {
  it('verifies a holon-mandate JWS over the given payload and returns its header', async () => {
    const mandate = { id: 'mnd_1', agent: 'agent_caller', budget: '5.000000', expires_at: '2026-02-01T00:00:00Z' };
    const payload = Buffer.from(canonicalize(mandate)!, 'utf8');
    const jws = await detachedJws(payload, keyA, { alg: 'EdDSA', kid: keyA.kid, typ: 'holon-mandate' });
    expect(await verifyDetachedJws(jws, payload, keySet, 'holon-mandate')).toEqual({
      ok: true,
      header: { alg: 'EdDSA', kid: keyA.kid, typ: 'holon-mandate' },
    });
    expect(await verifyDetachedJws(jws, payload, keySet, 'holon-receipt')).toEqual({ ok: false, reason: 'typ' });
    const other = Buffer.from(canonicalize({ ...mandate, budget: '5.000001' })!, 'utf8');
    expect(await verifyDetachedJws(jws, other, keySet, 'holon-mandate')).toEqual({ ok: false, reason: 'signature' });
    expect(await verifyDetachedJws(jws, payload, { keys: [keyB.entry] }, 'holon-mandate')).toEqual({ ok: false, reason: 'unknown key' });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Merkle: the test's own RFC 6962 MTH, PATH and PROOF/SUBPROOF over leaf hashes
// ---------------------------------------------------------------------------------------------------------------

const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const LEAF = Buffer.from([0]);
const NODE = Buffer.from([1]);

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function mth(d: Buffer[]): Buffer {
  if (d.length === 0) return sha256();
  if (d.length === 1) return d[0]!;
  const k = largestPowerOfTwoBelow(d.length);
  return sha256(NODE, mth(d.slice(0, k)), mth(d.slice(k)));
}

function path(m: number, d: Buffer[]): Buffer[] {
  if (d.length <= 1) return [];
  const k = largestPowerOfTwoBelow(d.length);
  return m < k ? [...path(m, d.slice(0, k)), mth(d.slice(k))] : [...path(m - k, d.slice(k)), mth(d.slice(0, k))];
}

function subproof(m: number, d: Buffer[], b: boolean): Buffer[] {
  if (m === d.length) return b ? [] : [mth(d)];
  const k = largestPowerOfTwoBelow(d.length);
  return m <= k ? [...subproof(m, d.slice(0, k), b), mth(d.slice(k))] : [...subproof(m - k, d.slice(k), false), mth(d.slice(0, k))];
}

const consistencyProof = (m: number, d: Buffer[]) => subproof(m, d, true);

function leavesOf(n: number, seed = 0): Buffer[] {
  return Array.from({ length: n }, (_, i) => sha256(LEAF, Buffer.from(`entry ${seed}/${i}`)));
}

function flip(b: Buffer, bit: number): Buffer {
  const c = Buffer.from(b);
  c[(bit >> 3) % c.length]! ^= 1 << (bit & 7);
  return c;
}

function swapped(d: Buffer[], i: number, j: number): Buffer[] {
  const c = [...d];
  [c[i], c[j]] = [c[j]!, c[i]!];
  return c;
}

describe('Merkle tree', () => {
  it('hashes leaves and nodes with the RFC 6962 prefixes, and merkleRoot is MTH', () => {
    expect(leafHash(Buffer.from('x'))).toEqual(sha256(LEAF, Buffer.from('x')));
    expect(nodeHash(leavesOf(2)[0]!, leavesOf(2)[1]!)).toEqual(sha256(NODE, leavesOf(2)[0]!, leavesOf(2)[1]!));
    expect(merkleRoot([])).toEqual(EMPTY_ROOT);
    expect(EMPTY_ROOT.toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    for (let n = 1; n <= 40; n++) expect(merkleRoot(leavesOf(n))).toEqual(mth(leavesOf(n)));
  });

  it('matches a published RFC 6962 vector (the CT / Trillian reference tree of 8 leaves)', () => {
    const entries = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'];
    const leaves = entries.map((hex) => leafHash(Buffer.from(hex, 'hex')));
    expect(merkleRoot(leaves).toString('hex')).toBe('5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328');
  });

  it('verifies every inclusion proof for sizes 1..40, and fails on swapped leaves or any flipped bit', () => {
    for (let n = 1; n <= 40; n++) {
      const d = leavesOf(n, n);
      const root = mth(d);
      for (let i = 0; i < n; i++) {
        const proof = path(i, d);
        expect(verifyInclusion(d[i]!, i, n, proof, root)).toBe(true);
        expect(verifyInclusion(flip(d[i]!, i), i, n, proof, root)).toBe(false);
        expect(verifyInclusion(d[i]!, i, n, proof, flip(root, i + 7))).toBe(false);
        for (let p = 0; p < proof.length; p++) {
          const bad = [...proof];
          bad[p] = flip(bad[p]!, p * 31 + i);
          expect(verifyInclusion(d[i]!, i, n, bad, root)).toBe(false);
        }
        if (n > 1) {
          const j = (i + 1) % n;
          const s = swapped(d, i, j);
          expect(verifyInclusion(d[i]!, i, n, proof, mth(s))).toBe(false);
          expect(verifyInclusion(d[i]!, i, n, path(i, s), mth(s))).toBe(false);
          expect(verifyInclusion(d[i]!, j, n, proof, root)).toBe(false);
          expect(verifyInclusion(d[i]!, i, n, proof.slice(0, -1), root)).toBe(false);
          expect(verifyInclusion(d[i]!, i, n, [...proof, d[j]!], root)).toBe(false);
          // An inner node passed off as a leaf: a short path that ends at the root must still fail (sn ≠ 0).
          expect(verifyInclusion(root, i, n, [], root)).toBe(false);
          if (proof.length > 1) expect(verifyInclusion(nodeHash(proof[0]!, d[i]!), i >> 1, n, proof.slice(1), root)).toBe(false);
        }
      }
    }
  });

  it('verifies every consistency proof for sizes 1..40, and fails on swapped leaves or any flipped bit', () => {
    for (let n = 1; n <= 40; n++) {
      const d = leavesOf(n, 1000 + n);
      const root2 = mth(d);
      const s = n > 1 ? swapped(d, 0, n - 1) : null;
      for (let m = 1; m <= n; m++) {
        const root1 = mth(d.slice(0, m));
        const proof = consistencyProof(m, d);
        expect(verifyConsistency(m, n, proof, root1, root2)).toBe(true);
        expect(verifyConsistency(m, n, proof, flip(root1, m), root2)).toBe(false);
        expect(verifyConsistency(m, n, proof, root1, flip(root2, m))).toBe(false);
        for (let p = 0; p < proof.length; p++) {
          const bad = [...proof];
          bad[p] = flip(bad[p]!, p * 13 + m);
          expect(verifyConsistency(m, n, bad, root1, root2)).toBe(false);
        }
        if (s !== null) {
          expect(verifyConsistency(m, n, consistencyProof(m, s), root1, mth(s))).toBe(false);
          expect(verifyConsistency(m, n, proof, root1, mth(s))).toBe(false);
        }
        if (m < n) {
          expect(verifyConsistency(m, n, [], root1, root2)).toBe(false);
          expect(verifyConsistency(m, n, proof.slice(0, -1), root1, root2)).toBe(false);
          expect(verifyConsistency(m, n, [...proof, root1], root1, root2)).toBe(false);
          expect(verifyConsistency(n, m, proof, root2, root1)).toBe(false);
        }
      }
    }
  });

  it('holds on random trees of up to 200 leaves (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.nat(), fc.nat(), fc.nat(), fc.nat(), (n, seed, rawIndex, rawM, bit) => {
        const d = leavesOf(n, seed);
        const root = mth(d);
        const i = rawIndex % n;
        const proof = path(i, d);
        expect(verifyInclusion(d[i]!, i, n, proof, root)).toBe(true);
        expect(verifyInclusion(d[i]!, i, n, proof, flip(root, bit))).toBe(false);
        if (proof.length > 0) {
          const bad = [...proof];
          bad[bit % bad.length] = flip(bad[bit % bad.length]!, bit);
          expect(verifyInclusion(d[i]!, i, n, bad, root)).toBe(false);
        }
        const m = (rawM % n) + 1;
        const root1 = mth(d.slice(0, m));
        const cproof = consistencyProof(m, d);
        expect(verifyConsistency(m, n, cproof, root1, root)).toBe(true);
        expect(verifyConsistency(m, n, cproof, flip(root1, bit), root)).toBe(false);
        if (cproof.length > 0) {
          const bad = [...cproof];
          bad[bit % bad.length] = flip(bad[bit % bad.length]!, bit);
          expect(verifyConsistency(m, n, bad, root1, root)).toBe(false);
        }
        if (n > 1) {
          const j = (i + 1 + (bit % (n - 1))) % n;
          const s = swapped(d, i, j);
          expect(verifyInclusion(d[i]!, i, n, path(i, s), mth(s))).toBe(false);
          const first = Math.min(i, j);
          if (first < m) expect(verifyConsistency(m, n, consistencyProof(m, s), root1, mth(s))).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('returns false, never throws, on malformed input', () => {
    const d = leavesOf(5);
    const root = mth(d);
    const proof = path(2, d);
    const short = Buffer.alloc(31);
    for (const args of [
      [d[2], -1, 5, proof, root],
      [d[2], 2.5, 5, proof, root],
      [d[2], Number.NaN, 5, proof, root],
      [d[2], 2, 0, proof, root],
      [d[2], 5, 5, proof, root],
      [d[2], 2, 5, [short], root],
      [d[2], 2, 5, 'proof', root],
      [d[2], 2, 5, [null], root],
      [short, 2, 5, proof, root],
      [d[2], 2, 5, proof, 'root'],
      [undefined, undefined, undefined, undefined, undefined],
      [d[2], 2 ** 40, 2 ** 40 + 1, proof, root],
      [d[2], 2 ** 53, 2 ** 53 + 1, proof, root],
    ]) {
      expect((verifyInclusion as (...a: unknown[]) => boolean)(...args)).toBe(false);
    }
    const cproof = consistencyProof(3, d);
    const root1 = mth(d.slice(0, 3));
    for (const args of [
      [-1, 5, cproof, root1, root],
      [3, 5.5, cproof, root1, root],
      [6, 5, cproof, root1, root],
      [3, 5, [short], root1, root],
      [3, 5, null, root1, root],
      [3, 5, cproof, short, root],
      [5, 5, [root], root, root],
      [5, 5, [], root1, root],
      [0, 5, [root], EMPTY_ROOT, root],
      [0, 5, [], root1, root],
      [2 ** 40, 2 ** 41, cproof, root1, root],
    ]) {
      expect((verifyConsistency as (...a: unknown[]) => boolean)(...args)).toBe(false);
    }
    expect(verifyConsistency(5, 5, [], root, root)).toBe(true);
    expect(verifyConsistency(0, 5, [], EMPTY_ROOT, root)).toBe(true);
    expect(verifyConsistency(0, 0, [], EMPTY_ROOT, EMPTY_ROOT)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Checkpoints
// ---------------------------------------------------------------------------------------------------------------

const ORIGIN = 'gateway.example.com/holon/log';

function testKeyId(name: string, raw: Buffer): Buffer {
  return sha256(Buffer.from(name, 'utf8'), Buffer.from([0x0a, 0x01]), raw).subarray(0, 4);
}

function signatureLine(name: string, key: TestKey, text: string, keyId = testKeyId(name, key.raw)): string {
  const sig = sign(null, Buffer.from(text, 'utf8'), key.privateKey);
  return `\u2014 ${name} ${Buffer.concat([keyId, sig]).toString('base64')}\n`;
}

function noteText(origin: string, size: string | number, root: string): string {
  return `${origin}\n${size}\n${root}\n`;
}

function signedNote(text: string, key: TestKey, name = ORIGIN): string {
  return `${text}\n${signatureLine(name, key, text)}`;
}

describe('verifyCheckpointNote', () => {
  const root = sha256(Buffer.from('some root'));
  const rootB64 = root.toString('base64');
  const text = noteText(ORIGIN, 12345, rootB64);

  it('verifies a note signed here and returns its fields', () => {
    expect(noteKeyId(ORIGIN, keyA.raw)).toEqual(testKeyId(ORIGIN, keyA.raw));
    expect(verifyCheckpointNote(signedNote(text, keyA), keySet)).toEqual({ ok: true, origin: ORIGIN, size: 12345, root, kid: keyA.kid });
    const zero = noteText(ORIGIN, 0, EMPTY_ROOT.toString('base64'));
    expect(verifyCheckpointNote(signedNote(zero, keyA), keySet)).toMatchObject({ ok: true, size: 0 });
  });

  it('finds the signer among several keys and ignores lines from unknown keys', () => {
    const twoKeys = { keys: [keyB.entry, { ...keyA.entry, retired_at: '2026-03-01T00:00:00Z' }] };
    expect(verifyCheckpointNote(signedNote(text, keyA), twoKeys)).toMatchObject({ ok: true, kid: keyA.kid });
    expect(verifyCheckpointNote(signedNote(text, keyB), twoKeys)).toMatchObject({ ok: true, kid: keyB.kid });
    // An unknown key's line under the same name, before or after ours; a witness's line under another name.
    const before = `${text}\n${signatureLine(ORIGIN, keyB, text)}${signatureLine(ORIGIN, keyA, text)}`;
    const after = `${text}\n${signatureLine(ORIGIN, keyA, text)}${signatureLine('witness.example/w1', keyB, text)}`;
    expect(verifyCheckpointNote(before, keySet)).toMatchObject({ ok: true, kid: keyA.kid });
    expect(verifyCheckpointNote(after, keySet)).toMatchObject({ ok: true, kid: keyA.kid });
  });

  it('fails on a tampered size, root, origin or signature', () => {
    const note = signedNote(text, keyA);
    expect(verifyCheckpointNote(note.replace('\n12345\n', '\n12346\n'), keySet)).toEqual({ ok: false, reason: 'invalid signature' });
    const otherRoot = sha256(Buffer.from('other root')).toString('base64');
    expect(verifyCheckpointNote(note.replace(rootB64, otherRoot), keySet)).toEqual({ ok: false, reason: 'invalid signature' });
    // The origin in the body only: the signature line is no longer this log's.
    expect(verifyCheckpointNote(note.replace(`${ORIGIN}\n`, 'evil.example/log\n'), keySet)).toEqual({ ok: false, reason: 'no known signer' });
    // The origin everywhere: neither the key id nor the signature matches any more.
    expect(verifyCheckpointNote(note.replaceAll(ORIGIN, 'evil.example/log'), keySet)).toEqual({ ok: false, reason: 'no known signer' });
    const line = note.slice(note.indexOf('\u2014'));
    const bytes = Buffer.from(line.trim().split(' ')[2]!, 'base64');
    bytes[40]! ^= 0x01;
    const tampered = `${text}\n\u2014 ${ORIGIN} ${bytes.toString('base64')}\n`;
    expect(verifyCheckpointNote(tampered, keySet)).toEqual({ ok: false, reason: 'invalid signature' });
  });

  it('fails on an unknown key, and on a valid signature carrying the wrong key id', () => {
    expect(verifyCheckpointNote(signedNote(text, keyB), keySet)).toEqual({ ok: false, reason: 'no known signer' });
    const wrongId = `${text}\n${signatureLine(ORIGIN, keyA, text, Buffer.from([1, 2, 3, 4]))}`;
    expect(verifyCheckpointNote(wrongId, keySet)).toEqual({ ok: false, reason: 'key id mismatch' });
    const otherName = `${text}\n${signatureLine('another.example/log', keyA, text)}`;
    expect(verifyCheckpointNote(otherName, keySet)).toEqual({ ok: false, reason: 'no known signer' });
  });

  it('fails on a malformed note, even when it is properly signed', () => {
    const reason = (t: string) => (verifyCheckpointNote(signedNote(t, keyA), keySet) as { reason?: string }).reason;
    expect(reason(noteText(ORIGIN, '012345', rootB64))).toBe('size');
    expect(reason(noteText(ORIGIN, '00', rootB64))).toBe('size');
    expect(reason(noteText(ORIGIN, '12a', rootB64))).toBe('size');
    expect(reason(noteText(ORIGIN, '-1', rootB64))).toBe('size');
    expect(reason(noteText(ORIGIN, '+1', rootB64))).toBe('size');
    expect(reason(noteText(ORIGIN, ' 1', rootB64))).toBe('size');
    expect(reason(noteText(ORIGIN, '', rootB64))).toBe('size');
    expect(reason(noteText(ORIGIN, '99999999999999999999', rootB64))).toBe('size');
    expect(reason(noteText(ORIGIN, 1, root.subarray(0, 31).toString('base64')))).toBe('root');
    expect(reason(noteText(ORIGIN, 1, Buffer.concat([root, Buffer.from([0])]).toString('base64')))).toBe('root');
    expect(reason(noteText(ORIGIN, 1, root.toString('base64url')))).toBe('root');
    expect(reason(noteText(ORIGIN, 1, rootB64.replace(/=$/, '')))).toBe('root');
    expect(reason(noteText(ORIGIN, 1, root.toString('hex')))).toBe('root');
    expect(reason(`${text}extension line\n`)).toBe('body lines');
    expect(reason(`${ORIGIN}\n12345\n`)).toBe('body lines');
    expect(reason(noteText('', 1, rootB64))).toBe('origin');
    expect(reason(`${ORIGIN}\n1\r\n${rootB64}\n`)).toBe('control character');

    const note = signedNote(text, keyA);
    expect(verifyCheckpointNote(note.replace('\n\n', '\n'), keySet)).toEqual({ ok: false, reason: 'missing blank line' });
    expect(verifyCheckpointNote(note.slice(0, -1), keySet)).toEqual({ ok: false, reason: 'signature lines' });
    expect(verifyCheckpointNote(`${text}\n`, keySet)).toEqual({ ok: false, reason: 'signature lines' });
    expect(verifyCheckpointNote(`${note}garbage\n`, keySet)).toEqual({ ok: false, reason: 'malformed signature line' });
    expect(verifyCheckpointNote(note.replace('\u2014', '-'), keySet)).toEqual({ ok: false, reason: 'malformed signature line' });
    expect(verifyCheckpointNote(42 as unknown as string, keySet)).toEqual({ ok: false, reason: 'not a string' });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// verifyReceiptProof, end to end
// ---------------------------------------------------------------------------------------------------------------

describe('verifyReceiptProof', () => {
  async function fixture() {
    const receipts = [];
    for (let i = 0; i < 7; i++) receipts.push(await signReceipt({ ...BODY, id: `rcpt_${i}`, amount: `0.0${i}0000` }, keyA));
    const child = await signReceipt({ ...BODY, id: 'rcpt_child', parent: 'rcpt_4' }, keyA);
    receipts[4] = await signReceipt({ ...BODY, id: 'rcpt_4', amount: '0.040000' }, keyA, { children: [child] });
    // The test's own leaves: SHA-256(0x00 ‖ RFC 8785 bytes without signature and children).
    const leaves = receipts.map((r) => sha256(LEAF, signedBytes(r)));
    const root = mth(leaves);
    const size = leaves.length;
    const note = signedNote(noteText(ORIGIN, size, root.toString('base64')), keyA);
    const index = 4;
    const proof = {
      receipt: 'rcpt_4',
      leaf_index: index,
      leaf_hash: leaves[index]!.toString('base64'),
      inclusion: path(index, leaves).map((h) => h.toString('base64')),
      checkpoint: { origin: ORIGIN, size, root_hash: root.toString('base64'), note, created_at: '2026-01-02T03:05:00Z' },
    };
    return { receipt: receipts[index]!, proof, leaves, child };
  }

  it('verifies a receipt, its leaf, the checkpoint and the inclusion', async () => {
    const { receipt, proof, leaves } = await fixture();
    expect(receiptLeafHash(receipt)).toEqual(leaves[4]);
    expect(await verifyReceiptProof({ receipt, proof, keySet })).toEqual({ ok: true });
  });

  it('names the check that failed', async () => {
    const { receipt, proof, leaves, child } = await fixture();
    const check = async (r: unknown, p: unknown, ks: unknown = keySet) => {
      const result = await verifyReceiptProof({ receipt: r, proof: p, keySet: ks });
      return result.ok ? 'ok' : result.reason;
    };
    expect(await check(receipt, proof, { keys: [{ ...keyA.entry, kid: keyB.kid }] })).toBe('key set');
    expect(await check(receipt, { ...proof, leaf_index: -1 })).toBe('proof');
    expect(await check(receipt, { ...proof, checkpoint: { ...proof.checkpoint, created_at: 'now' } })).toBe('proof');
    expect(await check(receipt, { ...proof, receipt: 'rcpt_3' })).toBe('receipt id');
    expect(await check({ ...receipt, amount: '0.040001' }, proof)).toBe('signature');
    expect(await check({ ...receipt, children: [{ ...child, amount: '0.010001' }] }, proof)).toBe('signature');
    expect(await check(receipt, { ...proof, leaf_hash: leaves[3]!.toString('base64') })).toBe('leaf');
    expect(await check(receipt, { ...proof, leaf_hash: 'not base64' })).toBe('leaf');
    const forgedNote = proof.checkpoint.note.replace(`\n${proof.checkpoint.size}\n`, '\n8\n');
    expect(await check(receipt, { ...proof, checkpoint: { ...proof.checkpoint, note: forgedNote } })).toBe('checkpoint signature');
    expect(await check(receipt, { ...proof, checkpoint: { ...proof.checkpoint, size: 8 } })).toBe('checkpoint fields');
    expect(await check(receipt, { ...proof, checkpoint: { ...proof.checkpoint, origin: 'other' } })).toBe('checkpoint fields');
    const otherRoot = mth(leaves.slice(0, 6)).toString('base64');
    expect(await check(receipt, { ...proof, checkpoint: { ...proof.checkpoint, root_hash: otherRoot } })).toBe('checkpoint fields');
    expect(await check(receipt, { ...proof, leaf_index: 3 })).toBe('inclusion');
    expect(await check(receipt, { ...proof, inclusion: proof.inclusion.slice(1) })).toBe('inclusion');
    expect(await check(receipt, { ...proof, inclusion: ['AAAA'] })).toBe('inclusion');
    const bad = [...proof.inclusion];
    bad[0] = flip(Buffer.from(bad[0]!, 'base64'), 3).toString('base64');
    expect(await check(receipt, { ...proof, inclusion: bad })).toBe('inclusion');
  });
});
