/**
 * `holon verify <file> [--proof proof.json] [--jwks jwks.json | --url URL] [--json]`: check what a gateway signed,
 * offline when given the files (docs/receipts.md "Verifying"). The file is recognised by its fields:
 *
 * - a receipt (GET /v0/receipts/{id}, a call's answer's `receipt`, a webhook's): its signature against the key set,
 *   and every child's; with `--proof` (GET /v0/receipts/{id}/proof), its leaf, its inclusion proof against the
 *   proof's checkpoint, and the checkpoint's signed note;
 * - a mandate (GET /v0/mandates/{ns}/{name}), or a chain of them, root first (a JSON array): each statement's signature,
 *   each link's parent hash, and each link attenuating its parent.
 *
 * The key set is `--jwks` (a saved /.well-known/jwks.json) or fetched from `--url`. Exit 0 verified, 1 not (saying
 * which check failed), 2 misuse (a missing or unreadable file, an unknown option, no key set).
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { canonicalJson } from '../../shared/core/canonical-json.js';
import { checkAttenuation } from '../../shared/core/mandate/index.js';
import { validateMandate } from '../../shared/core/mandate/validate.js';
import { verifyInclusion } from '../../shared/core/merkle.js';
import { MANDATE_JWS_TYPE, statementBytes, statementHash, type MandateStatement } from '../../shared/mandates/signing.js';
import { RECEIPT_JWS_TYPE, receiptBytes, receiptLeaf } from '../../shared/receipts/signing.js';
import type { ReceiptView } from '../../shared/receipts/store.js';
import { treeProblems } from '../../shared/receipts/tree-checks.js';
import { publicKeyProblem, type KeySet, type KeySetEntry } from '../../shared/signing/key-set.js';
import { openNote, parseCheckpointBody } from '../../shared/signing/signed-note.js';
import { verifyDetached } from '../../shared/signing/verify.js';

/** One check and how it went. */
interface Check {
  check: string;
  ok: boolean;
  detail: string;
}

class Misuse extends Error {}

async function readJson(file: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new Misuse(`cannot read ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new Misuse(`${what} ${file} is not JSON`);
  }
}

async function keySetFrom(values: { jwks?: string; url?: string }): Promise<KeySet> {
  if (values.jwks !== undefined) return asKeySet(await readJson(values.jwks, 'the key set'), values.jwks);
  if (values.url === undefined) throw new Misuse('give the key set: --jwks jwks.json (saved from /.well-known/jwks.json) or --url URL');
  const url = `${values.url.replace(/\/+$/, '')}/.well-known/jwks.json`;
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  } catch (e) {
    throw new Misuse(`cannot fetch the key set from ${url}: ${(e as Error).message}`);
  }
  if (!res.ok) throw new Misuse(`${url} answered ${res.status}`);
  return asKeySet(await res.json().catch(() => null), url);
}

/** Every key of the set well formed, or misuse naming the key: a key skipped would be a check silently not made. */
function asKeySet(v: unknown, where: string): KeySet {
  const keys = (v as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Misuse(`${where} is not a key set ({"keys": [...]})`);
  keys.forEach((k, i) => {
    const problem = keyProblem(k);
    if (problem) throw new Misuse(`key ${i} of the key set ${where} ${problem}: the key set is damaged, fetch it again`);
  });
  return { keys: keys as KeySetEntry[] };
}

function keyProblem(k: unknown): string | null {
  if (!k || typeof k !== 'object' || Array.isArray(k)) return 'is not an object';
  const key = k as Record<string, unknown>;
  if (typeof key.kid !== 'string' || key.kid === '') return 'has no kid';
  const problem = publicKeyProblem(key);
  return problem
    ? `(${key.kid})${problem.at} ${problem.message}, not ${JSON.stringify(problem.at === '' ? key.kty : key[problem.at.slice(1)]) ?? 'absent'}`
    : null;
}

type Kind = 'receipt' | 'mandate' | 'unknown';

function kindOf(doc: unknown): Kind {
  const first = Array.isArray(doc) ? doc[0] : doc;
  if (!first || typeof first !== 'object') return 'unknown';
  if ('statement' in first && 'mandate' in first) return 'mandate';
  if ('status' in first && 'cost' in first && 'id' in first) return 'receipt';
  return 'unknown';
}

/** A receipt's signature, then its children's, depth first. */
async function receiptChecks(receipt: ReceiptView, keySet: KeySet, out: Check[]): Promise<void> {
  if (typeof receipt.signature !== 'string') {
    out.push({ check: `signature of ${receipt.id}`, ok: false, detail: 'the receipt carries no signature' });
  } else {
    const v = await verifyDetached(receipt.signature, receiptBytes(receipt), keySet, { typ: RECEIPT_JWS_TYPE, signedAt: receipt.created_at });
    out.push({ check: `signature of ${receipt.id}`, ok: v.ok, detail: v.ok ? `signed by key ${v.kid}` : v.reason });
  }
  for (const child of Array.isArray(receipt.children) ? receipt.children : []) await receiptChecks(child, keySet, out);
}

/** The tree's own rules (shared/receipts/tree-checks.ts): what no single signature covers. */
function treeChecks(receipt: ReceiptView, out: Check[]): void {
  const problems = treeProblems(receipt);
  for (const p of problems) out.push({ check: `tree: ${p.rule} (${p.receipt})`, ok: false, detail: p.detail });
  if (problems.length === 0) {
    out.push({ check: 'tree', ok: true, detail: 'each child under its parent, no receipt twice, passed-through costs add up' });
  }
}

interface ProofFile {
  receipt: string;
  leaf_index: number;
  leaf_hash: string;
  inclusion: string[];
  checkpoint: { origin: string; size: number; root_hash: string; note: string };
}

/** The checkpoint's note signed by a key of the set, its fields as the proof says, the receipt in its tree. */
function proofChecks(receipt: ReceiptView, proof: ProofFile, keySet: KeySet, out: Check[]): void {
  const leaf = receiptLeaf(receipt);
  const sameReceipt = proof.receipt === receipt.id;
  out.push({ check: 'proof is of this receipt', ok: sameReceipt, detail: sameReceipt ? receipt.id : `the proof is of ${String(proof.receipt)}` });
  const leafOk = proof.leaf_hash === leaf.toString('base64');
  out.push({ check: 'leaf hash', ok: leafOk, detail: leafOk ? `leaf ${proof.leaf_index}` : 'the receipt does not hash to the proof’s leaf: it was changed' });
  const cp = proof.checkpoint ?? ({} as ProofFile['checkpoint']);
  const opened =
    typeof cp.note === 'string'
      ? openNote(
          cp.note,
          keySet.keys.map((k) => ({ name: cp.origin, publicKey: Buffer.from(k.x, 'base64url') })),
        )
      : null;
  out.push({
    check: 'checkpoint signature',
    ok: opened !== null,
    detail: opened ? `signed note of ${cp.origin}` : 'the checkpoint’s note is not signed by a key of the key set (or is malformed)',
  });
  if (!opened) return;
  let body: ReturnType<typeof parseCheckpointBody>;
  try {
    body = parseCheckpointBody(opened.text);
  } catch (e) {
    out.push({ check: 'checkpoint fields', ok: false, detail: (e as Error).message });
    return;
  }
  const fieldsOk = body.origin === cp.origin && body.size === cp.size && body.rootHash.toString('base64') === cp.root_hash;
  out.push({ check: 'checkpoint fields', ok: fieldsOk, detail: fieldsOk ? `size ${body.size}` : 'the note says another origin, size or root than the proof' });
  const path = Array.isArray(proof.inclusion) ? proof.inclusion.map((h) => Buffer.from(String(h), 'base64')) : [];
  const included = verifyInclusion(leaf, Number(proof.leaf_index), body.size, path, body.rootHash);
  out.push({
    check: 'inclusion',
    ok: included,
    detail: included ? `leaf ${proof.leaf_index} of ${body.size}` : 'the inclusion proof does not lead to the checkpoint’s root',
  });
}

interface MandateView {
  mandate: { id?: string };
  statement: MandateStatement | null;
  signature: string | null;
}

/** `revoked` lives on the row, not in what was signed: the one field a view may add to its statement's document. */
function withoutRevoked(doc: unknown): unknown {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return doc;
  const { revoked: _revoked, ...rest } = doc as Record<string, unknown>;
  return rest;
}

/**
 * The view's `mandate` is not signed: it must be the signed statement's document (`revoked` aside), or what a reader
 * takes from the view is not what was verified. Not verified otherwise, naming the first field that differs.
 */
function documentCheck(id: string, link: MandateView): Check {
  const shown = withoutRevoked(link.mandate);
  const signed = withoutRevoked(link.statement!.mandate);
  if (canonicalJson(shown) === canonicalJson(signed)) return { check: `document of ${id}`, ok: true, detail: 'the view shows the signed document' };
  const at = firstDifference(shown, signed, '$');
  return {
    check: `document of ${id}`,
    ok: false,
    detail: `the view's mandate differs from the signed statement at ${at}: only the statement was signed, so only it was checked`,
  };
}

function firstDifference(a: unknown, b: unknown, path: string): string {
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      const x = (a as Record<string, unknown>)[k];
      const y = (b as Record<string, unknown>)[k];
      if (canonicalJson(x ?? null) !== canonicalJson(y ?? null)) return firstDifference(x, y, Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`);
    }
  }
  return path;
}

/** Each link's signature, its parent hash, and its attenuating its parent. */
async function mandateChecks(chain: MandateView[], keySet: KeySet, out: Check[]): Promise<void> {
  let parent: MandateView | undefined;
  for (const link of chain) {
    const id = String(link.mandate?.id ?? link.statement?.mandate?.id ?? '?');
    if (!link.statement || typeof link.signature !== 'string') {
      out.push({ check: `signature of ${id}`, ok: false, detail: 'the mandate carries no signed statement' });
      parent = link;
      continue;
    }
    const v = await verifyDetached(link.signature, statementBytes(link.statement), keySet, { typ: MANDATE_JWS_TYPE, signedAt: link.statement.signed_at });
    out.push({ check: `signature of ${id}`, ok: v.ok, detail: v.ok ? `signed by key ${v.kid}, issuer ${link.statement.issuer}` : v.reason });
    out.push(documentCheck(id, link));
    if (parent?.statement) {
      const linked = link.statement.parent?.id === parent.statement.mandate.id && link.statement.parent?.sha256 === statementHash(parent.statement);
      out.push({
        check: `parent of ${id}`,
        ok: linked,
        detail: linked ? `chained to ${parent.statement.mandate.id}` : 'its parent hash is not the statement above it',
      });
      const p = validateMandate(parent.statement.mandate);
      const c = validateMandate(link.statement.mandate);
      const widening = p.ok && c.ok ? checkAttenuation(p.mandate, c.mandate) : ['a document of the chain is not a valid mandate'];
      out.push({ check: `attenuation of ${id}`, ok: widening.length === 0, detail: widening.length === 0 ? 'within its parent' : widening.join('; ') });
    }
    parent = link;
  }
}

export async function verifyCommand(argv: string[]): Promise<number> {
  let checks: Check[];
  let json = false;
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { proof: { type: 'string' }, jwks: { type: 'string' }, url: { type: 'string' }, json: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
    json = values.json === true;
    if (positionals.length !== 1)
      throw new Misuse('give one file: holon verify <receipt.json | mandate.json> [--proof proof.json] [--jwks jwks.json | --url URL]');
    const doc = await readJson(positionals[0]!, 'the file');
    const kind = kindOf(doc);
    if (kind === 'unknown') throw new Misuse(`${positionals[0]} is neither a receipt nor a mandate (nor a chain of mandates)`);
    if (kind === 'mandate' && values.proof !== undefined) throw new Misuse('--proof is for a receipt');
    const keySet = await keySetFrom(values);
    checks = [];
    if (kind === 'receipt') {
      const receipt = doc as ReceiptView;
      await receiptChecks(receipt, keySet, checks);
      treeChecks(receipt, checks);
      if (values.proof !== undefined) proofChecks(receipt, (await readJson(values.proof, 'the proof')) as ProofFile, keySet, checks);
    } else {
      await mandateChecks((Array.isArray(doc) ? doc : [doc]) as MandateView[], keySet, checks);
    }
  } catch (e) {
    if (e instanceof Misuse || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`holon verify: ${(e as Error).message}\n`);
      return 2;
    }
    throw e;
  }
  const verified = checks.every((c) => c.ok);
  if (json) process.stdout.write(`${JSON.stringify({ verified, checks }, null, 2)}\n`);
  else {
    for (const c of checks) process.stdout.write(`${c.ok ? '✓' : '✗'} ${c.check}: ${c.detail}\n`);
    process.stdout.write(verified ? 'verified\n' : `NOT verified: ${checks.find((c) => !c.ok)!.check} failed\n`);
  }
  return verified ? 0 : 1;
}
