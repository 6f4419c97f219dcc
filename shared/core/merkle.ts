/**
 * The Merkle tree of a transparency log: RFC 6962 §2.1 (restated, unchanged, as RFC 9162 §2.1) over SHA-256.
 *
 * - Hashing (RFC 6962 §2.1, RFC 9162 §2.1.1): a leaf is SHA-256(0x00 ‖ data), an interior node SHA-256(0x01 ‖ left ‖
 *   right), the empty tree SHA-256(""); MTH(D[n]) splits D[n] at k, the largest power of two smaller than n.
 * - Storage model: a store keeps every *aligned complete subtree*, `NodeId { level, index }`, the hash of leaves
 *   [index·2^level, (index+1)·2^level), written when its last leaf is appended (level 0: the leaf hashes). Every range
 *   the RFC recursion visits is a left-to-right run of such nodes (`rangeNodes`), so `rangeHash` computes MTH(D[a:b])
 *   from at most ~log2(b-a) stored nodes and `neededNodes` tells a store which ones to fetch in one query.
 * - Proofs: `inclusionRanges` gives the ranges whose MTH form PATH(m, D[n]) (RFC 6962 §2.1.1; leaf-to-root order, as
 *   RFC 9162 §2.1.3.1 transmits it), `consistencyRanges` those of PROOF(m, D[n]) (RFC 6962 §2.1.2, SUBPROOF with its
 *   `b` flag; RFC 9162 §2.1.4.1), and `proofFrom` turns ranges into hashes.
 * - Verification: `verifyInclusion` and `verifyConsistency` are the algorithms of RFC 9162 §2.1.3.2 and §2.1.4.2, step
 *   by step. They never throw: any malformed input (an index not below the size, sizes out of order, a proof of the
 *   wrong length, a hash that is not 32 bytes, a size that is not a safe integer) is simply `false`. As the RFC's
 *   algorithms do, they bind the index (and the first size) but not the tree size: a proof for tree size n also
 *   verifies against the same root with any other size whose proof has the same shape (often n ± 1, e.g. leaf 0 in
 *   sizes 5 and 6), which is why a tree size is only meaningful from a signed checkpoint (c2sp.org/tlog-checkpoint).
 *
 * Tree sizes and indices are JS numbers: safe integers, so trees stay below 2^53 leaves. Arithmetic never uses 32-bit
 * bitwise operators (halving is `Math.floor(x / 2)`, exact below 2^53). The builders throw a RangeError for an index or
 * size that is negative or not a safe integer, or for arguments out of order.
 *
 * Pure: no I/O, only `node:crypto` for SHA-256.
 */
import { createHash } from 'node:crypto';

/** An aligned complete subtree: the hash of leaves [index·2^level, (index+1)·2^level). Level 0 is the leaf hashes. */
export interface NodeId {
  level: number;
  index: number;
}

/** How a store hands over a stored node's hash (32 bytes). */
export type NodeLookup = (id: NodeId) => Uint8Array;

/** A half-open leaf range [start, end). */
export type LeafRange = [number, number];

const HASH_BYTES = 32;
const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);

/** SHA-256 of the given parts, concatenated. */
function sha256(...parts: Uint8Array[]): Buffer {
  const h = createHash('sha256');
  for (const part of parts) h.update(part);
  return h.digest();
}

/** MTH of the empty tree: SHA-256 of the empty string (RFC 6962 §2.1). A shared value: do not mutate it. */
export const EMPTY_ROOT: Buffer = sha256();

/** Our own copy of the empty root, safe from callers mutating the export. */
const EMPTY = Buffer.from(EMPTY_ROOT);

/** The leaf hash of an entry: SHA-256(0x00 ‖ data). */
export function leafHash(data: Uint8Array): Buffer {
  return sha256(LEAF_PREFIX, data);
}

/** The hash of an interior node: SHA-256(0x01 ‖ left ‖ right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return sha256(NODE_PREFIX, left, right);
}

// ---- arithmetic on safe integers ------------------------------------------------------------------------------------

/** Whether `n` is a usable index or size: a safe integer, not negative. */
function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/** Throws a RangeError unless `n` is a non-negative safe integer. */
function checkCount(name: string, n: number): void {
  if (!isCount(n)) throw new RangeError(`${name} must be a non-negative safe integer, got ${String(n)}`);
}

/** k of RFC 6962 §2.1: the largest power of two smaller than n (n ≥ 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** log2(n) when n is a power of two, else -1. */
function exactLog2(n: number): number {
  let level = 0;
  let p = 1;
  while (p < n) {
    p *= 2;
    level++;
  }
  return p === n ? level : -1;
}

/** Whether the lowest bit of `n` is set. */
function isOdd(n: number): boolean {
  return n % 2 === 1;
}

/** n >> 1, exact for any safe integer. */
function half(n: number): number {
  return Math.floor(n / 2);
}

// ---- ranges and stored nodes ----------------------------------------------------------------------------------------

/** Throws a RangeError unless 0 ≤ start ≤ end, both safe integers. */
function checkRange(start: number, end: number): void {
  checkCount('start', start);
  checkCount('end', end);
  if (start > end) throw new RangeError(`range start ${start} is after its end ${end}`);
}

/** The stored node that is exactly [start, end), if the range is an aligned complete subtree. */
function alignedNode(start: number, end: number): NodeId | null {
  const level = exactLog2(end - start);
  if (level < 0) return null;
  const width = end - start;
  return start % width === 0 ? { level, index: start / width } : null;
}

/** Appends to `out`, left to right, the stored nodes the recursion for MTH(D[start:end]) combines. */
function collectNodes(start: number, end: number, out: NodeId[]): void {
  if (start === end) return;
  const node = alignedNode(start, end);
  if (node !== null) {
    out.push(node);
    return;
  }
  const k = splitPoint(end - start);
  collectNodes(start, start + k, out);
  collectNodes(start + k, end, out);
}

/**
 * The aligned complete nodes, left to right, whose combination by the RFC 6962 recursion gives MTH(D[start:end]).
 *
 * For every range the recursion visits (a whole tree, and every range of PATH and PROOF) this is the binary
 * decomposition of end-start into at most ~log2 nodes. Any other range is valid too, but splitting it at powers of
 * two leaves unaligned pieces, so it may come down to individual leaves (up to end-start nodes). Empty for start = end.
 */
export function rangeNodes(start: number, end: number): NodeId[] {
  checkRange(start, end);
  const out: NodeId[] = [];
  collectNodes(start, end, out);
  return out;
}

/** A stored node's hash, checked to be a hash. */
function lookupNode(lookup: NodeLookup, id: NodeId): Buffer {
  const hash = lookup(id);
  if (!(hash instanceof Uint8Array) || hash.length !== HASH_BYTES) {
    throw new Error(`node lookup for level ${id.level} index ${id.index} did not return a ${HASH_BYTES}-byte hash`);
  }
  return Buffer.from(hash);
}

/** MTH(D[start:end]) for start < end, by the recursion, reading aligned complete subtrees from `lookup`. */
function hashRange(start: number, end: number, lookup: NodeLookup): Buffer {
  const node = alignedNode(start, end);
  if (node !== null) return lookupNode(lookup, node);
  const k = splitPoint(end - start);
  return nodeHash(hashRange(start, start + k, lookup), hashRange(start + k, end, lookup));
}

/**
 * MTH(D[start:end]) (RFC 6962 §2.1) from stored nodes: an aligned complete range is one lookup, any other is split at
 * k and recursed. It asks `lookup` for exactly the nodes of `rangeNodes(start, end)`. The empty range is EMPTY_ROOT.
 * Throws when `lookup` returns something that is not a 32-byte hash.
 */
export function rangeHash(start: number, end: number, lookup: NodeLookup): Buffer {
  checkRange(start, end);
  return start === end ? Buffer.from(EMPTY) : hashRange(start, end, lookup);
}

// ---- proofs as ranges -----------------------------------------------------------------------------------------------

/**
 * The ranges whose MTH, in order, are the audit path PATH(m, D[n]) of RFC 6962 §2.1.1 for leaf `leafIndex` in a tree
 * of `treeSize` leaves: leaf-to-root, the order of RFC 9162 §2.1.3.1's inclusion_path. Empty for a one-leaf tree.
 * Throws a RangeError unless 0 ≤ leafIndex < treeSize.
 */
export function inclusionRanges(leafIndex: number, treeSize: number): LeafRange[] {
  checkCount('leafIndex', leafIndex);
  checkCount('treeSize', treeSize);
  if (leafIndex >= treeSize) throw new RangeError(`leaf index ${leafIndex} is not below the tree size ${treeSize}`);
  const rootToLeaf: LeafRange[] = [];
  let start = 0;
  let end = treeSize;
  while (end - start > 1) {
    const mid = start + splitPoint(end - start);
    if (leafIndex < mid) {
      rootToLeaf.push([mid, end]); // PATH(m, D[0:k]) : MTH(D[k:n])
      end = mid;
    } else {
      rootToLeaf.push([start, mid]); // PATH(m - k, D[k:n]) : MTH(D[0:k])
      start = mid;
    }
  }
  return rootToLeaf.reverse();
}

/**
 * The ranges whose MTH, in order, are the consistency proof PROOF(m, D[n]) = SUBPROOF(m, D[n], true) of RFC 6962
 * §2.1.2 between the tree of `from` leaves and that of `to` leaves, in the RFC's order. Empty when from = to or
 * from = 0 (nothing to prove). Throws a RangeError unless 0 ≤ from ≤ to.
 */
export function consistencyRanges(from: number, to: number): LeafRange[] {
  checkCount('from', from);
  checkCount('to', to);
  if (from > to) throw new RangeError(`consistency from size ${from} to the smaller size ${to}`);
  if (from === 0 || from === to) return [];
  const outerFirst: LeafRange[] = [];
  // SUBPROOF(from - start, D[start:end], b), with `from` kept absolute.
  let start = 0;
  let end = to;
  let b = true;
  while (from !== end) {
    const mid = start + splitPoint(end - start);
    if (from <= mid) {
      outerFirst.push([mid, end]); // SUBPROOF(m, D[0:k], b) : MTH(D[k:n])
      end = mid;
    } else {
      outerFirst.push([start, mid]); // SUBPROOF(m - k, D[k:n], false) : MTH(D[0:k])
      start = mid;
      b = false;
    }
  }
  if (!b) outerFirst.push([start, end]); // SUBPROOF(m, D[m], false) = {MTH(D[m])}
  return outerFirst.reverse();
}

/** A node's identity as a string, for de-duplication. */
function nodeKey(id: NodeId): string {
  return `${id.level}/${id.index}`;
}

/** The de-duplicated union of `rangeNodes` over `ranges`, in first-use order: what a store fetches for a proof. */
export function neededNodes(ranges: LeafRange[]): NodeId[] {
  const seen = new Set<string>();
  const out: NodeId[] = [];
  for (const [start, end] of ranges) {
    for (const id of rangeNodes(start, end)) {
      const key = nodeKey(id);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(id);
    }
  }
  return out;
}

/** The proof (the MTH of each range, in order) from stored nodes. */
export function proofFrom(ranges: LeafRange[], lookup: NodeLookup): Buffer[] {
  return ranges.map(([start, end]) => rangeHash(start, end, lookup));
}

/** MTH(D[start:end]) from the leaf hashes, straight from the definition. */
function mthOfLeafHashes(leaves: Uint8Array[], start: number, end: number): Buffer {
  if (start === end) return Buffer.from(EMPTY);
  if (end - start === 1) return Buffer.from(leaves[start]!);
  const mid = start + splitPoint(end - start);
  return nodeHash(mthOfLeafHashes(leaves, start, mid), mthOfLeafHashes(leaves, mid, end));
}

/**
 * The naive MTH (RFC 6962 §2.1) of a tree given its leaf hashes (level 0, `leafHash(entry)` each, as a store keeps
 * them), for audits and tests. Throws a RangeError for a leaf that is not a 32-byte hash (an entry passed by mistake).
 */
export function rootFromLeaves(leaves: Uint8Array[]): Buffer {
  leaves.forEach((leaf, i) => {
    if (!(leaf instanceof Uint8Array) || leaf.length !== HASH_BYTES) throw new RangeError(`leaf ${i} is not a ${HASH_BYTES}-byte leaf hash`);
  });
  return mthOfLeafHashes(leaves, 0, leaves.length);
}

// ---- verification (RFC 9162 §2.1.3.2, §2.1.4.2) ---------------------------------------------------------------------

/** Whether `h` is a 32-byte hash. */
function isHash(h: unknown): h is Uint8Array {
  return h instanceof Uint8Array && h.length === HASH_BYTES;
}

/** Whether `proof` is an array of 32-byte hashes. */
function isProof(proof: unknown): proof is Uint8Array[] {
  return Array.isArray(proof) && proof.every(isHash);
}

/** Byte equality. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(a, b) === 0;
}

/**
 * Whether `proof` proves that `leaf` (a leaf hash) is leaf `leafIndex` of the tree of `treeSize` leaves whose root is
 * `root`: RFC 9162 §2.1.3.2, exactly. False, never an exception, for any malformed input.
 */
// biome-ignore lint/complexity/useMaxParams: RFC 9162 §2.1.3.2's inputs (as Go's proof.VerifyInclusion)
export function verifyInclusion(leaf: Uint8Array, leafIndex: number, treeSize: number, proof: Uint8Array[], root: Uint8Array): boolean {
  if (!isCount(leafIndex) || !isCount(treeSize) || !isHash(leaf) || !isHash(root) || !isProof(proof)) return false;
  // 1. leaf_index must be below tree_size.
  if (leafIndex >= treeSize) return false;
  // 2.–3.
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r: Buffer = Buffer.from(leaf);
  // 4.
  for (const p of proof) {
    if (sn === 0) return false; // a.
    if (isOdd(fn) || fn === sn) {
      r = nodeHash(p, r); // b.i.
      if (!isOdd(fn)) {
        while (!isOdd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn); // c.
    sn = half(sn);
  }
  // 5.
  return sn === 0 && sameBytes(r, root);
}

/** What steps 3–6 of RFC 9162 §2.1.4.2 compute: the two roots and what is left of the second size. */
interface ConsistencyWalk {
  fr: Buffer;
  sr: Buffer;
  sn: number;
}

/** Steps 3–6 of RFC 9162 §2.1.4.2 over a non-empty path (first_hash already prepended if due); null where step 6a fails. */
function consistencyWalk(size1: number, size2: number, path: Uint8Array[]): ConsistencyWalk | null {
  // 3.
  let fn = size1 - 1;
  let sn = size2 - 1;
  // 4.
  while (isOdd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  // 5.
  let fr: Buffer = Buffer.from(path[0]!);
  let sr: Buffer = fr;
  // 6.
  for (const c of path.slice(1)) {
    if (sn === 0) return null; // a.
    if (isOdd(fn) || fn === sn) {
      fr = nodeHash(c, fr); // b.i.
      sr = nodeHash(c, sr); // b.ii.
      if (!isOdd(fn)) {
        while (!isOdd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn); // c.
    sn = half(sn);
  }
  return { fr, sr, sn };
}

/**
 * Whether `proof` proves that the tree of `size1` leaves with root `root1` is a prefix of the tree of `size2` leaves
 * with root `root2`: RFC 9162 §2.1.4.2, exactly, for 0 < size1 < size2. The cases that algorithm leaves out: equal
 * sizes need an empty proof and equal roots; size1 = 0 needs an empty proof and root1 = EMPTY_ROOT (the empty tree is
 * a prefix of every tree). False, never an exception, for any malformed input (including size1 > size2).
 */
// biome-ignore lint/complexity/useMaxParams: RFC 9162 §2.1.4.2's inputs, in its order (as Go's proof.VerifyConsistency)
export function verifyConsistency(size1: number, size2: number, proof: Uint8Array[], root1: Uint8Array, root2: Uint8Array): boolean {
  if (!isCount(size1) || !isCount(size2) || !isHash(root1) || !isHash(root2) || !isProof(proof)) return false;
  if (size1 > size2) return false;
  if (size1 === size2) return proof.length === 0 && sameBytes(root1, root2) && (size1 !== 0 || sameBytes(root1, EMPTY));
  if (size1 === 0) return proof.length === 0 && sameBytes(root1, EMPTY);
  // RFC 9162 §2.1.4.2, for 0 < size1 < size2. 1. An empty consistency_path fails.
  if (proof.length === 0) return false;
  // 2. If first is an exact power of 2, prepend first_hash.
  const walk = consistencyWalk(size1, size2, exactLog2(size1) >= 0 ? [root1, ...proof] : proof);
  // 7.
  return walk !== null && walk.sn === 0 && sameBytes(walk.fr, root1) && sameBytes(walk.sr, root2);
}
