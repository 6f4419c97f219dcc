/**
 * shared/core/merkle.ts: the RFC 6962 / RFC 9162 Merkle tree.
 *
 * - Known vectors: the eight reference leaves of certificate-transparency-go / Trillian / transparency-dev/merkle with
 *   their roots for sizes 1..8, and the inclusion and consistency proofs of transparency-dev/merkle's
 *   proof/verify_test.go (its `leaf` there is 1-based; here indices are 0-based).
 * - An independent naive implementation, straight from RFC 6962's definitions of MTH, PATH and PROOF/SUBPROOF over
 *   the leaf list, against which fast-check compares the module on random trees of 1..300 leaves: roots from stored
 *   nodes, every inclusion proof, consistency proofs for random 1 ≤ m ≤ n, tampering, and that a store is only asked
 *   for the nodes `neededNodes` names.
 * - Builders refuse bad arguments with a RangeError; verifiers return false, never throw, on malformed input.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  consistencyRanges,
  EMPTY_ROOT,
  inclusionRanges,
  type LeafRange,
  leafHash,
  type NodeId,
  neededNodes,
  nodeHash,
  proofFrom,
  rangeHash,
  rangeNodes,
  rootFromLeaves,
  verifyConsistency,
  verifyInclusion,
} from '../../shared/core/merkle.js';

// ---- an independent naive implementation (RFC 6962 §2.1) ------------------------------------------------------------

const sha256 = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const naiveLeaf = (d: Uint8Array): Buffer => sha256(Buffer.from([0]), d);
const naiveNode = (l: Uint8Array, r: Uint8Array): Buffer => sha256(Buffer.from([1]), l, r);
/** The largest power of two smaller than n (n > 1). */
const kOf = (n: number): number => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};

/** MTH, PATH and PROOF over a leaf list, by the RFC's recursive definitions (MTH memoised per range: a pure function). */
function naiveTree(leaves: Uint8Array[]) {
  const memo = new Map<string, Buffer>();
  /** MTH(D[a:b]). */
  const mth = (a: number, b: number): Buffer => {
    const key = `${a}:${b}`;
    const hit = memo.get(key);
    if (hit) return hit;
    const n = b - a;
    const value = n === 0 ? sha256() : n === 1 ? naiveLeaf(leaves[a]!) : naiveNode(mth(a, a + kOf(n)), mth(a + kOf(n), b));
    memo.set(key, value);
    return value;
  };
  /** PATH(m, D[a:b]), m relative to a. */
  const path = (m: number, a: number, b: number): Buffer[] => {
    const n = b - a;
    if (n === 1) return [];
    const k = kOf(n);
    return m < k ? [...path(m, a, a + k), mth(a + k, b)] : [...path(m - k, a + k, b), mth(a, a + k)];
  };
  /** SUBPROOF(m, D[a:b], flag), m relative to a. */
  const subproof = (m: number, a: number, b: number, flag: boolean): Buffer[] => {
    const n = b - a;
    if (m === n) return flag ? [] : [mth(a, b)];
    const k = kOf(n);
    return m <= k ? [...subproof(m, a, a + k, flag), mth(a + k, b)] : [...subproof(m - k, a + k, b, false), mth(a, a + k)];
  };
  return {
    root: (size = leaves.length) => mth(0, size),
    mth,
    path: (m: number, size = leaves.length) => path(m, 0, size),
    proof: (m: number, size = leaves.length) => (m === 0 || m === size ? [] : subproof(m, 0, size, true)),
  };
}

/** Every aligned complete node of a tree, bottom-up: level 0 the leaf hashes, level l+1 the parents of full pairs. */
function allNodes(leaves: Uint8Array[]): Map<string, Buffer> {
  const nodes = new Map<string, Buffer>();
  let level = leaves.map(naiveLeaf);
  for (let l = 0; level.length > 0; l++) {
    level.forEach((h, i) => nodes.set(`${l}/${i}`, h));
    const up: Buffer[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) up.push(naiveNode(level[i]!, level[i + 1]!));
    level = up;
  }
  return nodes;
}

const keyOf = (id: NodeId) => `${id.level}/${id.index}`;

/** A lookup over stored nodes that records what it was asked, and fails on a node the store does not have. */
function storeOf(nodes: Map<string, Buffer>) {
  const asked: string[] = [];
  const lookup = (id: NodeId): Buffer => {
    asked.push(keyOf(id));
    const h = nodes.get(keyOf(id));
    if (!h) throw new Error(`no stored node ${keyOf(id)}`);
    return h;
  };
  return { lookup, asked };
}

/** Side of each sibling in PATH(m, D[n]), from the RFC recursion: what an inclusion verifier's computation depends on. */
function inclusionShape(m: number, n: number): string | null {
  if (!(m >= 0 && m < n)) return null;
  const go = (m: number, n: number): string => {
    if (n === 1) return '';
    const k = kOf(n);
    return m < k ? go(m, k) + 'R' : go(m - k, n - k) + 'L';
  };
  return go(m, n);
}

/** Role of each element of PROOF(m, D[n]): S the seed MTH(D[m']), L a left subtree of both trees, R right, new only. */
function consistencyShape(m: number, n: number): string | null {
  if (!(m > 0 && m < n)) return null;
  const go = (m: number, n: number, flag: boolean): string => {
    if (m === n) return flag ? '' : 'S';
    const k = kOf(n);
    return m <= k ? go(m, k, flag) + 'R' : go(m - k, n - k, false) + 'L';
  };
  return go(m, n, true);
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const unhex = (s: string) => Buffer.from(s, 'hex');
/** A copy of `b` with one bit flipped. */
const flip = (b: Uint8Array, bit: number): Buffer => {
  const c = Buffer.from(b);
  c[(bit >> 3) % c.length]! ^= 1 << (bit & 7);
  return c;
};
/** A copy of `proof` with element i's bit flipped. */
const flipAt = (proof: Uint8Array[], i: number, bit: number) => proof.map((p, j) => (j === i ? flip(p, bit) : p));

/** Random trees of 1..300 distinct entries (each prefixed by its index: identical leaves would make tampering moot). */
const trees = fc
  .integer({ min: 1, max: 300 }) // the size first: fast-check's default `size` would keep arrays near 10 elements
  .chain((n) => fc.array(fc.uint8Array({ maxLength: 12 }), { minLength: n, maxLength: n }))
  .map((ds) => ds.map((d, i) => Buffer.concat([Buffer.from(Uint32Array.of(i).buffer), d])));

// ---- known vectors --------------------------------------------------------------------------------------------------

/** The RFC 6962 reference leaves (certificate-transparency-go, Trillian, transparency-dev/merkle). */
const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(unhex);
/** Their roots for tree sizes 1..8. */
const ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
/** transparency-dev/merkle proof/verify_test.go `inclusionProofs` (0-based index here). */
const INCLUSION: Array<{ index: number; size: number; proof: string[] }> = [
  { index: 0, size: 1, proof: [] },
  {
    index: 0,
    size: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    index: 5,
    size: 8,
    proof: [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  { index: 2, size: 3, proof: ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125'] },
  {
    index: 1,
    size: 5,
    proof: [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
];
/** transparency-dev/merkle proof/verify_test.go `consistencyProofs`. */
const CONSISTENCY: Array<{ size1: number; size2: number; proof: string[] }> = [
  { size1: 1, size2: 1, proof: [] },
  {
    size1: 1,
    size2: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    size1: 6,
    size2: 8,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
  {
    size1: 2,
    size2: 5,
    proof: ['5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e', 'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b'],
  },
  {
    size1: 6,
    size2: 7,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
];

describe('RFC 6962 hashing and the reference vectors', () => {
  const store = storeOf(allNodes(LEAVES));

  it('hashes leaves with 0x00, nodes with 0x01, and the empty tree as SHA-256("")', () => {
    expect(hex(EMPTY_ROOT)).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(hex(leafHash(LEAVES[0]!))).toBe(ROOTS[0]);
    expect(leafHash(Buffer.from('abc'))).toEqual(sha256(Buffer.from([0]), Buffer.from('abc')));
    expect(nodeHash(leafHash(LEAVES[0]!), leafHash(LEAVES[1]!))).toEqual(unhex(ROOTS[1]!));
    expect(rootFromLeaves([])).toEqual(EMPTY_ROOT);
  });

  it('rootFromLeaves takes leaf hashes, and refuses an entry passed for one', () => {
    expect(rootFromLeaves([leafHash(LEAVES[3]!)])).toEqual(leafHash(LEAVES[3]!));
    expect(() => rootFromLeaves([leafHash(LEAVES[0]!), LEAVES[3]!])).toThrow(RangeError);
  });

  it('gives the reference root for every size 1..8, naively and from stored nodes', () => {
    for (let n = 1; n <= 8; n++) {
      expect(hex(rootFromLeaves(LEAVES.slice(0, n).map(leafHash))), `size ${n}`).toBe(ROOTS[n - 1]);
      expect(hex(rangeHash(0, n, store.lookup)), `size ${n}`).toBe(ROOTS[n - 1]);
      expect(hex(naiveTree(LEAVES).root(n)), `naive size ${n}`).toBe(ROOTS[n - 1]);
    }
    expect(rangeHash(0, 0, store.lookup)).toEqual(EMPTY_ROOT);
  });

  it.each(INCLUSION)('builds and verifies the reference inclusion proof of leaf $index in size $size', ({ index, size, proof }) => {
    const got = proofFrom(inclusionRanges(index, size), storeOf(allNodes(LEAVES.slice(0, size))).lookup);
    expect(got.map(hex)).toEqual(proof);
    expect(verifyInclusion(leafHash(LEAVES[index]!), index, size, proof.map(unhex), unhex(ROOTS[size - 1]!))).toBe(true);
  });

  it.each(CONSISTENCY)('builds and verifies the reference consistency proof $size1 → $size2', ({ size1, size2, proof }) => {
    const got = proofFrom(consistencyRanges(size1, size2), storeOf(allNodes(LEAVES.slice(0, size2))).lookup);
    expect(got.map(hex)).toEqual(proof);
    expect(verifyConsistency(size1, size2, proof.map(unhex), unhex(ROOTS[size1 - 1]!), unhex(ROOTS[size2 - 1]!))).toBe(true);
  });
});

describe('ranges and stored nodes', () => {
  it('decomposes recursion ranges into aligned complete nodes', () => {
    expect(rangeNodes(0, 8)).toEqual([{ level: 3, index: 0 }]);
    expect(rangeNodes(0, 7)).toEqual([
      { level: 2, index: 0 },
      { level: 1, index: 2 },
      { level: 0, index: 6 },
    ]);
    expect(rangeNodes(4, 7)).toEqual([
      { level: 1, index: 2 },
      { level: 0, index: 6 },
    ]);
    expect(rangeNodes(5, 5)).toEqual([]);
    // Not a range of the recursion ([1,3) is not aligned): it comes down to leaves.
    expect(rangeNodes(1, 3)).toEqual([
      { level: 0, index: 1 },
      { level: 0, index: 2 },
    ]);
  });

  it('gives the RFC ranges for PATH and PROOF', () => {
    expect(inclusionRanges(0, 1)).toEqual([]);
    expect(inclusionRanges(0, 8)).toEqual([
      [1, 2],
      [2, 4],
      [4, 8],
    ]);
    expect(inclusionRanges(5, 8)).toEqual([
      [4, 5],
      [6, 8],
      [0, 4],
    ]);
    expect(inclusionRanges(6, 7)).toEqual([
      [4, 6],
      [0, 4],
    ]);
    expect(consistencyRanges(3, 7)).toEqual([
      [2, 3],
      [3, 4],
      [0, 2],
      [4, 7],
    ]);
    expect(consistencyRanges(4, 7)).toEqual([[4, 7]]);
    expect(consistencyRanges(0, 7)).toEqual([]);
    expect(consistencyRanges(7, 7)).toEqual([]);
    expect(neededNodes([...inclusionRanges(3, 7), ...consistencyRanges(3, 7)]).map(keyOf)).toEqual(['0/2', '1/0', '1/2', '0/6', '0/3']);
  });

  it('refuses bad arguments with a RangeError', () => {
    const bad = [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53];
    const lookup = () => Buffer.alloc(32);
    for (const x of bad) {
      expect(() => rangeNodes(x, 10)).toThrow(RangeError);
      expect(() => rangeNodes(0, x)).toThrow(RangeError);
      expect(() => rangeHash(0, x, lookup)).toThrow(RangeError);
      expect(() => inclusionRanges(x, 10)).toThrow(RangeError);
      expect(() => inclusionRanges(0, x)).toThrow(RangeError);
      expect(() => consistencyRanges(x, 10)).toThrow(RangeError);
      expect(() => consistencyRanges(1, x)).toThrow(RangeError);
      expect(() => neededNodes([[0, x]])).toThrow(RangeError);
    }
    expect(() => rangeNodes(3, 2)).toThrow(RangeError);
    expect(() => inclusionRanges(5, 5)).toThrow(RangeError);
    expect(() => inclusionRanges(0, 0)).toThrow(RangeError);
    expect(() => consistencyRanges(6, 5)).toThrow(RangeError);
  });

  it('refuses a lookup that does not return a 32-byte hash', () => {
    expect(() => rangeHash(0, 3, () => Buffer.alloc(31))).toThrow(/32-byte/);
  });

  it('handles tree sizes up to 2^53 - 1 exactly', () => {
    // All leaves equal: node (l, i) is then H_l for every i, so any size has a real tree whose nodes cost O(53).
    const levels = [leafHash(Buffer.from('x'))];
    for (let l = 1; l <= 53; l++) levels.push(nodeHash(levels[l - 1]!, levels[l - 1]!));
    const lookup = (id: NodeId) => levels[id.level]!;
    const n = Number.MAX_SAFE_INTEGER;
    const m = 2 ** 52 + 3;
    expect(rangeNodes(0, n)).toHaveLength(53);
    const root = rangeHash(0, n, lookup);
    const rootM = rangeHash(0, m, lookup);
    for (const i of [0, 1, m, 2 ** 52, n - 2, n - 1]) {
      const ranges = inclusionRanges(i, n);
      for (const [a, b] of ranges) expect(Number.isSafeInteger(a) && Number.isSafeInteger(b) && a < b).toBe(true);
      expect(verifyInclusion(levels[0]!, i, n, proofFrom(ranges, lookup), root)).toBe(true);
    }
    expect(verifyConsistency(m, n, proofFrom(consistencyRanges(m, n), lookup), rootM, root)).toBe(true);
    expect(verifyConsistency(m, n, proofFrom(consistencyRanges(m, n), lookup), root, root)).toBe(false);
  });
});

describe('against the naive RFC 6962 definitions (fast-check)', () => {
  it('(a) rangeHash(0, n) over all stored nodes is rootFromLeaves of the leaf hashes and the naive MTH, as is every range', () => {
    fc.assert(
      fc.property(trees, fc.nat(), fc.nat(), (leaves, x, y) => {
        const n = leaves.length;
        const naive = naiveTree(leaves);
        const store = storeOf(allNodes(leaves));
        expect(rangeHash(0, n, store.lookup)).toEqual(naive.root());
        expect(rootFromLeaves(leaves.map(naiveLeaf))).toEqual(naive.root());
        const [a, b] = [x % (n + 1), y % (n + 1)].sort((p, q) => p - q) as [number, number];
        expect(rangeHash(a, b, store.lookup)).toEqual(naive.mth(a, b));
        expect(rangeHash(0, b, store.lookup)).toEqual(naive.root(b));
      }),
      { numRuns: 100 },
    );
  });

  it('(b) every leaf: the proof from inclusionRanges is the naive PATH and verifies', () => {
    fc.assert(
      fc.property(trees, (leaves) => {
        const n = leaves.length;
        const naive = naiveTree(leaves);
        const store = storeOf(allNodes(leaves));
        const root = naive.root();
        for (let i = 0; i < n; i++) {
          const proof = proofFrom(inclusionRanges(i, n), store.lookup);
          expect(proof).toEqual(naive.path(i));
          expect(verifyInclusion(naiveLeaf(leaves[i]!), i, n, proof, root)).toBe(true);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('(c) for 1 ≤ m ≤ n the proof from consistencyRanges is the naive PROOF and verifies', () => {
    fc.assert(
      fc.property(trees, fc.nat(), (leaves, x) => {
        const n = leaves.length;
        const m = 1 + (x % n);
        const naive = naiveTree(leaves);
        const proof = proofFrom(consistencyRanges(m, n), storeOf(allNodes(leaves)).lookup);
        expect(proof).toEqual(naive.proof(m));
        expect(verifyConsistency(m, n, proof, naive.root(m), naive.root())).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('the store is asked for exactly the nodes neededNodes names', () => {
    fc.assert(
      fc.property(trees, fc.nat(), fc.nat(), (leaves, x, y) => {
        const n = leaves.length;
        const i = x % n;
        const m = 1 + (y % n);
        for (const ranges of [[[0, n]] as LeafRange[], inclusionRanges(i, n), consistencyRanges(m, n)]) {
          const store = storeOf(allNodes(leaves));
          proofFrom(ranges, store.lookup);
          const needed = neededNodes(ranges).map(keyOf);
          expect(new Set(needed).size).toBe(needed.length);
          expect(new Set(store.asked)).toEqual(new Set(needed));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('(d) a tampered inclusion proof fails', () => {
    fc.assert(
      fc.property(trees, fc.nat(), fc.nat(), (leaves, x, bit) => {
        const n = leaves.length;
        const i = x % n;
        const naive = naiveTree(leaves);
        const root = naive.root();
        const leaf = naiveLeaf(leaves[i]!);
        const proof = naive.path(i);
        expect(verifyInclusion(leaf, i, n, proof, root)).toBe(true);
        for (let j = 0; j < proof.length; j++) expect(verifyInclusion(leaf, i, n, flipAt(proof, j, bit), root)).toBe(false);
        expect(verifyInclusion(flip(leaf, bit), i, n, proof, root)).toBe(false);
        expect(verifyInclusion(leaf, i, n, proof, flip(root, bit))).toBe(false);
        expect(verifyInclusion(leaf, i - 1, n, proof, root)).toBe(false);
        expect(verifyInclusion(leaf, i + 1, n, proof, root)).toBe(false);
        // The tree size is not authenticated by the proof (RFC 9162): another size whose path has the same shape
        // verifies too, and only that.
        for (const size of [n - 1, n + 1]) {
          expect(verifyInclusion(leaf, i, size, proof, root)).toBe(inclusionShape(i, size) === inclusionShape(i, n));
        }
        if (proof.length > 0) expect(verifyInclusion(leaf, i, n, proof.slice(0, -1), root)).toBe(false);
        if (proof.length > 0) expect(verifyInclusion(leaf, i, n, proof.slice(1), root)).toBe(false);
        expect(verifyInclusion(leaf, i, n, [...proof, root], root)).toBe(false);
        expect(verifyInclusion(leaf, i, n, [root, ...proof], root)).toBe(false);
        expect(verifyInclusion(leaf, i, n, [...proof, leaf], root)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('(d) a tampered consistency proof fails', () => {
    fc.assert(
      fc.property(trees, fc.nat(), fc.nat(), (leaves, x, bit) => {
        const n = leaves.length;
        const m = 1 + (x % n);
        const naive = naiveTree(leaves);
        const [r1, r2] = [naive.root(m), naive.root()];
        const proof = naive.proof(m);
        expect(verifyConsistency(m, n, proof, r1, r2)).toBe(true);
        for (let j = 0; j < proof.length; j++) expect(verifyConsistency(m, n, flipAt(proof, j, bit), r1, r2)).toBe(false);
        expect(verifyConsistency(m, n, proof, flip(r1, bit), r2)).toBe(false);
        expect(verifyConsistency(m, n, proof, r1, flip(r2, bit))).toBe(false);
        expect(verifyConsistency(m - 1, n, proof, r1, r2)).toBe(false);
        expect(verifyConsistency(m + 1, n, proof, r1, r2)).toBe(false);
        // size2, as the tree size of an inclusion proof, is not bound by the proof: a size2 whose proof has the very
        // same shape verifies too (so it must come from the signed checkpoint), and only that.
        for (const n2 of [n - 1, n + 1]) {
          const same = m < n && consistencyShape(m, n2) === consistencyShape(m, n);
          expect(verifyConsistency(m, n2, proof, r1, r2), `${m} → ${n2}`).toBe(same);
        }
        if (proof.length > 0) expect(verifyConsistency(m, n, proof.slice(0, -1), r1, r2)).toBe(false);
        if (proof.length > 0) expect(verifyConsistency(m, n, proof.slice(1), r1, r2)).toBe(false);
        expect(verifyConsistency(m, n, [...proof, r1], r1, r2)).toBe(false);
        expect(verifyConsistency(m, n, [r2, ...proof], r1, r2)).toBe(false);
        if (m < n) expect(verifyConsistency(m, n, proof, r2, r1)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('a proof for size n verifies for another size with the same shape (why sizes must be signed)', () => {
    const naive = naiveTree(LEAVES);
    // PATH(0, D[5]) and PATH(0, D[6]) both have three right siblings.
    expect(verifyInclusion(leafHash(LEAVES[0]!), 0, 6, naive.path(0, 5), naive.root(5))).toBe(true);
    expect(verifyInclusion(leafHash(LEAVES[0]!), 0, 9, naive.path(0, 5), naive.root(5))).toBe(false);
    // PROOF(4, D[5]) = [MTH(D[4:5])] and PROOF(4, D[6]) = [MTH(D[4:6])]: one right sibling each.
    expect(verifyConsistency(4, 6, naive.proof(4, 5), naive.root(4), naive.root(5))).toBe(true);
  });
});

describe('malformed verifier input', () => {
  const naive = naiveTree(LEAVES);
  const root = naive.root();
  const leaf = leafHash(LEAVES[5]!);
  const proof = naive.path(5);
  const cProof = naive.proof(6);
  const [r6, r8] = [naive.root(6), naive.root(8)];
  const junk = [null, undefined, 'abc', 42, {}, [], new Uint8Array(31), new Uint8Array(33)] as unknown as Uint8Array[];
  const badNumbers = [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, -0.5, 2 ** 53, 2 ** 60] as number[];

  /** Calls `f`, asserting it returns false and throws nothing. */
  const rejects = (f: () => boolean) => {
    let result: boolean | undefined;
    expect(() => {
      result = f();
    }).not.toThrow();
    expect(result).toBe(false);
  };

  it('verifyInclusion returns false and never throws', () => {
    expect(verifyInclusion(leaf, 5, 8, proof, root)).toBe(true);
    for (const x of badNumbers) {
      rejects(() => verifyInclusion(leaf, x, 8, proof, root));
      rejects(() => verifyInclusion(leaf, 5, x, proof, root));
    }
    for (const j of junk) {
      rejects(() => verifyInclusion(j, 5, 8, proof, root));
      rejects(() => verifyInclusion(leaf, 5, 8, proof, j));
      rejects(() => verifyInclusion(leaf, 5, 8, [proof[0]!, j, proof[2]!], root));
    }
    rejects(() => verifyInclusion(leaf, 5, 8, null as unknown as Uint8Array[], root));
    rejects(() => verifyInclusion(leaf, 5, 8, 'proof' as unknown as Uint8Array[], root));
    rejects(() => verifyInclusion(leaf, 8, 8, proof, root)); // index = size
    rejects(() => verifyInclusion(leaf, 9, 8, proof, root));
    rejects(() => verifyInclusion(leaf, 0, 0, [], EMPTY_ROOT)); // nothing is in the empty tree
    rejects(() => verifyInclusion(leaf, 5, 8, [], root));
    rejects(() => verifyInclusion(leaf, 5, 8, [...proof, ...proof], root));
    rejects(() => verifyInclusion(leaf, 0, 1, [leaf], leaf)); // a one-leaf tree has an empty path
    expect(verifyInclusion(leaf, 0, 1, [], leaf)).toBe(true);
  });

  it('verifyConsistency returns false and never throws', () => {
    expect(verifyConsistency(6, 8, cProof, r6, r8)).toBe(true);
    for (const x of badNumbers) {
      rejects(() => verifyConsistency(x, 8, cProof, r6, r8));
      rejects(() => verifyConsistency(6, x, cProof, r6, r8));
    }
    for (const j of junk) {
      rejects(() => verifyConsistency(6, 8, cProof, j, r8));
      rejects(() => verifyConsistency(6, 8, cProof, r6, j));
      rejects(() => verifyConsistency(6, 8, [j, ...cProof.slice(1)], r6, r8));
    }
    rejects(() => verifyConsistency(6, 8, undefined as unknown as Uint8Array[], r6, r8));
    rejects(() => verifyConsistency(8, 6, cProof, r8, r6)); // sizes out of order
    rejects(() => verifyConsistency(6, 8, [], r6, r8)); // RFC 9162 step 1
    rejects(() => verifyConsistency(8, 8, [], r6, r8)); // equal sizes, different roots
    rejects(() => verifyConsistency(8, 8, [r8], r8, r8)); // equal sizes, a proof
    rejects(() => verifyConsistency(0, 8, [r8], EMPTY_ROOT, r8)); // from the empty tree, a proof
    rejects(() => verifyConsistency(0, 8, [], r6, r8)); // the empty tree's root is SHA-256("")
    rejects(() => verifyConsistency(0, 0, [], r6, r6));
    expect(verifyConsistency(8, 8, [], r8, r8)).toBe(true);
    expect(verifyConsistency(0, 8, [], EMPTY_ROOT, r8)).toBe(true);
    expect(verifyConsistency(0, 0, [], EMPTY_ROOT, EMPTY_ROOT)).toBe(true);
  });
});
