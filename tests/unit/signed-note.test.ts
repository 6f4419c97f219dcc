/**
 * shared/signing/signed-note.ts: C2SP signed notes (Ed25519) and tlog checkpoints.
 *
 * - The reference example of golang.org/x/mod/sumdb/note (note_test.go, also quoted by other implementations): the
 *   PeterNeumann verifier key, its key ID c74f20a3, and its signed note, which openNote verifies and (Ed25519 being
 *   deterministic) signNote reproduces byte for byte from the example's private key.
 * - The key ID against an independent computation; the vkey format.
 * - Round trips (a note, a checkpoint body, a signed checkpoint), the C2SP tlog-checkpoint example body, and strict
 *   checkpoint parsing.
 * - Tampering (text, size, root, signature, key name, key ID, another key) and malformed notes: always null. Unknown
 *   keys' signatures are ignored; a known key's failing signature rejects the note.
 * - Signing through a NoteSigner (a key held elsewhere) gives the same note, and a signer that does not match its
 *   public key is refused.
 */
import { createHash, createPrivateKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkpointBody, ed25519KeyId, openNote, parseCheckpointBody, signNote, verifierKey } from '../../shared/signing/signed-note.js';

/** A fresh Ed25519 key pair, the public key as raw 32 bytes. */
function keyPair(): { privateKey: KeyObject; publicKey: Buffer } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const { x } = publicKey.export({ format: 'jwk' });
  return { privateKey, publicKey: Buffer.from(x!, 'base64url') };
}

/** The key ID computed here, independently: SHA-256(name ‖ 0x0A ‖ 0x01 ‖ key)[:4]. */
const keyIdHere = (name: string, publicKey: Uint8Array) =>
  createHash('sha256')
    .update(Buffer.concat([Buffer.from(name, 'utf8'), Buffer.from([0x0a, 0x01]), publicKey]))
    .digest()
    .subarray(0, 4);

/** The signature block of a signed note (its lines after the blank line). */
const signatureLine = (signed: string) => signed.slice(signed.lastIndexOf('\n\n') + 2);

/** A signed note with the signature bytes of its (single) line altered, re-encoded as valid base64. */
function withSignatureByte(signed: string, at: number): string {
  const line = signatureLine(signed);
  const space = line.lastIndexOf(' ');
  const blob = Buffer.from(line.slice(space + 1, -1), 'base64');
  blob[at]! ^= 0x01;
  return signed.slice(0, signed.length - line.length) + line.slice(0, space + 1) + blob.toString('base64') + '\n';
}

// golang.org/x/mod/sumdb/note, note_test.go.
const PETER = {
  vkey: 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW',
  skey: 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz',
  text: "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n",
  signature: '— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n',
};

describe('the golang.org/x/mod/sumdb/note reference example', () => {
  // vkey: name + key ID + base64(0x01 ‖ key); the base64 may itself contain "+", so split only twice.
  const [name, id, ...rest] = PETER.vkey.split('+') as [string, string, ...string[]];
  const typed = Buffer.from(rest.join('+'), 'base64');
  const publicKey = typed.subarray(1);
  const note = `${PETER.text}\n${PETER.signature}`;

  it('decodes to a name, a key ID and an Ed25519 key, and the key ID is c74f20a3', () => {
    expect(name).toBe('PeterNeumann');
    expect(id).toBe('c74f20a3');
    expect(typed[0]).toBe(0x01);
    expect(publicKey).toHaveLength(32);
    expect(ed25519KeyId(name, publicKey).toString('hex')).toBe('c74f20a3');
    expect(keyIdHere(name, publicKey).toString('hex')).toBe('c74f20a3');
    expect(verifierKey(name, publicKey)).toBe(PETER.vkey);
  });

  it('opens the example note', () => {
    expect(openNote(note, [{ name, publicKey }])).toEqual({ text: PETER.text, verifiedBy: ['PeterNeumann'] });
    expect(openNote(note.replace('cryptography', 'cryptographY'), [{ name, publicKey }])).toBeNull();
  });

  it('reproduces the example signature from the example private key (Ed25519 is deterministic)', () => {
    const skeyParts = PETER.skey.split('+');
    expect(skeyParts.slice(0, 4)).toEqual(['PRIVATE', 'KEY', 'PeterNeumann', 'c74f20a3']);
    const seed = Buffer.from(skeyParts.slice(4).join('+'), 'base64');
    expect(seed[0]).toBe(0x01);
    const privateKey = createPrivateKey({
      key: { kty: 'OKP', crv: 'Ed25519', d: seed.subarray(1).toString('base64url'), x: publicKey.toString('base64url') },
      format: 'jwk',
    });
    expect(signNote(PETER.text, 'PeterNeumann', privateKey)).toBe(note);
  });
});

describe('key IDs and verifier keys', () => {
  it('computes the key ID as SHA-256(name ‖ 0x0A ‖ 0x01 ‖ key)[:4], UTF-8 names included', () => {
    for (const name of ['example.com/log', 'a', 'ünïcødé.example/ħ']) {
      const { publicKey } = keyPair();
      expect(ed25519KeyId(name, publicKey)).toEqual(keyIdHere(name, publicKey));
      expect(verifierKey(name, publicKey)).toBe(
        `${name}+${keyIdHere(name, publicKey).toString('hex')}+${Buffer.concat([Buffer.from([1]), publicKey]).toString('base64')}`,
      );
    }
  });

  it('refuses invalid key names and keys', () => {
    const { publicKey } = keyPair();
    for (const bad of ['', 'a b', 'a+b', 'a\tb', 'a\u00a0b', 'a\u2003b', 'a\nb']) expect(() => ed25519KeyId(bad, publicKey)).toThrow(/key name/);
    expect(() => ed25519KeyId('ok', publicKey.subarray(1))).toThrow(/32 bytes/);
  });
});

describe('checkpoints', () => {
  const root = createHash('sha256').update('root').digest();

  it('writes the three lines and parses them back', () => {
    const body = checkpointBody({ origin: 'example.com/log', size: 20852163, rootHash: root });
    expect(body).toBe(`example.com/log\n20852163\n${root.toString('base64')}\n`);
    expect(parseCheckpointBody(body)).toEqual({ origin: 'example.com/log', size: 20852163, rootHash: root });
    const empty = checkpointBody({ origin: 'o', size: 0, rootHash: root });
    expect(parseCheckpointBody(empty).size).toBe(0);
    const max = checkpointBody({ origin: 'o', size: Number.MAX_SAFE_INTEGER, rootHash: root });
    expect(parseCheckpointBody(max).size).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('parses the C2SP tlog-checkpoint example body', () => {
    const got = parseCheckpointBody('example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n');
    expect(got.origin).toBe('example.com/behind-the-sofa');
    expect(got.size).toBe(20852163);
    expect(got.rootHash.toString('base64')).toBe('CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=');
  });

  it('signs and opens a checkpoint', () => {
    const { privateKey, publicKey } = keyPair();
    const signed = signNote(checkpointBody({ origin: 'example.com/log', size: 7, rootHash: root }), 'example.com/log', privateKey);
    const opened = openNote(signed, [{ name: 'example.com/log', publicKey }]);
    expect(opened?.verifiedBy).toEqual(['example.com/log']);
    expect(parseCheckpointBody(opened!.text)).toEqual({ origin: 'example.com/log', size: 7, rootHash: root });
  });

  it('parses strictly', () => {
    const b64 = root.toString('base64');
    const bad: Array<[string, RegExp]> = [
      [`o\n7\n${b64}`, /newline/],
      [`o\n7\n`, /lines/],
      [`o\n7\n${b64}\nextension\n`, /extension/],
      [`o\n7\n${b64}\n\n`, /extension/],
      [`\n7\n${b64}\n`, /empty/],
      [`o\r\n7\n${b64}\n`, /control/],
      [`o\n07\n${b64}\n`, /leading zeros/],
      [`o\n00\n${b64}\n`, /leading zeros/],
      [`o\n-1\n${b64}\n`, /decimal/],
      [`o\n+1\n${b64}\n`, /decimal/],
      [`o\n1.0\n${b64}\n`, /decimal/],
      [`o\n1e3\n${b64}\n`, /decimal/],
      [`o\n 7\n${b64}\n`, /decimal/],
      [`o\n\n${b64}\n`, /decimal/],
      [`o\n9007199254740992\n${b64}\n`, /2\^53/],
      [`o\n7\n${b64.replace(/=$/, '')}\n`, /base64/],
      [`o\n7\n${root.toString('base64url')}=\n`, /base64/],
      [`o\n7\n${b64} \n`, /base64/],
      [`o\n7\n${root.subarray(1).toString('base64')}\n`, /31 bytes/],
      [`o\n7\n${Buffer.concat([root, Buffer.from([0])]).toString('base64')}\n`, /33 bytes/],
    ];
    // A non-canonical encoding of the same 32 bytes: the last character's unused low bits set.
    const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.indexOf(b64[42]!);
    bad.push([`o\n7\n${b64.slice(0, 42)}${'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'[last | 1]}=\n`, /base64/]);
    for (const [text, message] of bad) expect(() => parseCheckpointBody(text), JSON.stringify(text)).toThrow(message);
  });

  it('refuses to write a body it would not parse', () => {
    expect(() => checkpointBody({ origin: '', size: 1, rootHash: root })).toThrow(/empty/);
    expect(() => checkpointBody({ origin: 'a\nb', size: 1, rootHash: root })).toThrow(/newline/);
    expect(() => checkpointBody({ origin: 'o', size: -1, rootHash: root })).toThrow(/size/);
    expect(() => checkpointBody({ origin: 'o', size: 1.5, rootHash: root })).toThrow(/size/);
    expect(() => checkpointBody({ origin: 'o', size: 2 ** 53, rootHash: root })).toThrow(/size/);
    expect(() => checkpointBody({ origin: 'o', size: 1, rootHash: root.subarray(1) })).toThrow(/32 bytes/);
  });
});

describe('signed notes', () => {
  const alice = { name: 'alice.example/log', ...keyPair() };
  const bob = { name: 'bob.example/witness', ...keyPair() };
  const aliceV = { name: alice.name, publicKey: alice.publicKey };
  const bobV = { name: bob.name, publicKey: bob.publicKey };
  const root = createHash('sha256').update('r').digest();
  const text = checkpointBody({ origin: alice.name, size: 42, rootHash: root });
  const signed = signNote(text, alice.name, alice.privateKey);

  it('round-trips: text, blank line, one em-dash signature line of key ID and 64-byte signature', () => {
    expect(signed.startsWith(`${text}\n\u2014 ${alice.name} `)).toBe(true);
    expect(signed.endsWith('\n')).toBe(true);
    const blob = Buffer.from(signatureLine(signed).split(' ')[2]!.trimEnd(), 'base64');
    expect(blob).toHaveLength(68);
    expect(blob.subarray(0, 4)).toEqual(keyIdHere(alice.name, alice.publicKey));
    expect(openNote(signed, [aliceV])).toEqual({ text, verifiedBy: [alice.name] });
    // A text with blank lines of its own: the last blank line separates the signatures.
    const poem = 'Ognuno sta solo sul cuor della terra\ntrafitto da un raggio di sole:\n\ned è subito sera.\n';
    expect(openNote(signNote(poem, alice.name, alice.privateKey), [aliceV])).toEqual({ text: poem, verifiedBy: [alice.name] });
  });

  it('rejects any tampering', () => {
    const other = keyPair();
    const tampered = [
      signed.replace('alice.example/log\n42', 'alice.example/lag\n42'), // a byte of the text
      signed.replace('\n42\n', '\n43\n'), // the size
      signed.replace(root.toString('base64'), createHash('sha256').update('s').digest().toString('base64')), // the root
      withSignatureByte(signed, 10), // the signature
      withSignatureByte(signed, 67),
      withSignatureByte(signed, 0), // the key ID: now an unknown key, so no known signature
      signed.replace(`\u2014 ${alice.name} `, `\u2014 ${alice.name}x `), // the key name: likewise
    ];
    for (const t of tampered) expect(openNote(t, [aliceV]), t).toBeNull();
    // The right name with another key (so another key ID), or another name with the right key.
    expect(openNote(signed, [{ name: alice.name, publicKey: other.publicKey }])).toBeNull();
    expect(openNote(signed, [{ name: 'carol.example', publicKey: alice.publicKey }])).toBeNull();
    expect(openNote(signed, [])).toBeNull();
  });

  it('rejects a known key whose signature does not verify, even beside a good one', () => {
    const bobSig = signatureLine(signNote(text, bob.name, bob.privateKey));
    const badAlice = withSignatureByte(signed, 20);
    expect(openNote(badAlice + bobSig, [aliceV, bobV])).toBeNull();
    // A forged signature under a known name and key ID, made with another key.
    const mallory = keyPair();
    const forged = signNote(text, alice.name, mallory.privateKey);
    const forgedLine = signatureLine(forged);
    const withAliceId = Buffer.from(forgedLine.split(' ')[2]!.trimEnd(), 'base64');
    keyIdHere(alice.name, alice.publicKey).copy(withAliceId, 0);
    expect(openNote(`${text}\n\u2014 ${alice.name} ${withAliceId.toString('base64')}\n`, [aliceV])).toBeNull();
  });

  it('ignores signatures by unknown keys and reports every known one', () => {
    const bobSig = signatureLine(signNote(text, bob.name, bob.privateKey));
    const both = signed + bobSig;
    expect(openNote(both, [aliceV])).toEqual({ text, verifiedBy: [alice.name] });
    expect(openNote(both, [bobV])).toEqual({ text, verifiedBy: [bob.name] });
    expect(openNote(both, [bobV, aliceV])).toEqual({ text, verifiedBy: [alice.name, bob.name] });
    const stranger = keyPair();
    const unknownFirst = `${text}\n${signatureLine(signNote(text, 'stranger', stranger.privateKey))}${signatureLine(signed)}`;
    expect(openNote(unknownFirst, [aliceV])).toEqual({ text, verifiedBy: [alice.name] });
    // Same name as a known key but another key (so another ID): unknown, ignored.
    const sameName = signatureLine(signNote(text, alice.name, stranger.privateKey));
    expect(openNote(signed + sameName, [aliceV])).toEqual({ text, verifiedBy: [alice.name] });
    // A repeated line counts once.
    expect(openNote(signed + signatureLine(signed), [aliceV])).toEqual({ text, verifiedBy: [alice.name] });
  });

  it('accepts 16 signature lines and refuses more than 100', () => {
    const junkLine = (i: number) => `\u2014 unknown${i} ${Buffer.alloc(68, i).toString('base64')}\n`;
    const lines = (n: number) => Array.from({ length: n }, (_, i) => junkLine(i)).join('');
    expect(openNote(signed + lines(15), [aliceV])?.verifiedBy).toEqual([alice.name]);
    expect(openNote(signed + lines(99), [aliceV])?.verifiedBy).toEqual([alice.name]);
    expect(openNote(signed + lines(100), [aliceV])).toBeNull();
  });

  it('rejects malformed notes', () => {
    const line = signatureLine(signed);
    const b64 = line.slice(line.lastIndexOf(' ') + 1, -1);
    const malformed = [
      `${text}${line}`, // no blank line
      `${text}\n`, // no signature line
      text,
      `${text}\n\n${line}`, // an extra blank line: it joins the text (the last blank line splits), so the signature fails
      `${text}\n${line}\n`, // a blank line after the signatures
      `${text}\n${line.slice(0, -1)}`, // no final newline
      `${text}\n\u2014 ${alice.name} !!!${b64.slice(3)}\n`, // bad base64
      `${text}\n\u2014 ${alice.name} ${b64.replace(/=+$/, '')}\n`, // unpadded base64
      `${text}\n\u2014 ${alice.name} ${Buffer.from(b64, 'base64').toString('base64url')}\n`, // base64url
      `${text}\n\u2014 ${alice.name} \n`, // no signature
      `${text}\n\u2014 ${alice.name}\n`, // no space and no signature
      `${text}\n\u2014 ${alice.name} ${Buffer.alloc(4).toString('base64')}\n`, // a key ID and no signature
      `${text}\n\u2014 ${alice.name}  ${b64}\n`, // two spaces
      `${text}\n\u2014 ${alice.name} ${b64} \n`, // trailing space
      `${text}\n- ${alice.name} ${b64}\n`, // hyphen, not em dash
      `${text}\n\u2013 ${alice.name} ${b64}\n`, // en dash
      `${text}\n\u2014${alice.name} ${b64}\n`, // no space after the dash
      `${text}\n\u2014  ${alice.name} ${b64}\n`, // empty key name
      `${text}\n\u2014 a+b ${b64}\n`, // "+" in the key name
      `${text}\n${line}garbage\n`, // a line that is not a signature
      `${text.replace('\n', '\t\n')}\n${line}`, // a control character
      `${text.replace('\n', '\r\n')}\n${line}`,
      `${text}\ud800\n\n${line}`, // not UTF-8 (an unpaired surrogate)
    ];
    for (const m of malformed) expect(openNote(m, [aliceV]), JSON.stringify(m)).toBeNull();
  });

  it('refuses to sign what it could not open, and non-Ed25519 keys', () => {
    expect(() => signNote('no newline', alice.name, alice.privateKey)).toThrow(/newline/);
    expect(() => signNote('tab\there\n', alice.name, alice.privateKey)).toThrow(/control/);
    expect(() => signNote('half \ud800\n', alice.name, alice.privateKey)).toThrow(/UTF-8/);
    for (const bad of ['', 'a b', 'a+b']) expect(() => signNote(text, bad, alice.privateKey)).toThrow(/key name/);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(() => signNote(text, alice.name, ec.privateKey)).toThrow(/Ed25519/);
    expect(() => signNote(text, alice.name, generateKeyPairSync('ed25519').publicKey)).toThrow(/Ed25519/);
  });

  it('signs with a NoteSigner as with the KeyObject it wraps, and refuses a signer whose signature does not verify', () => {
    const signer = { publicKey: alice.publicKey, sign: (data: Uint8Array) => sign(null, data, alice.privateKey) };
    expect(signNote(text, alice.name, signer)).toBe(signed); // Ed25519 is deterministic
    expect(openNote(signNote(text, alice.name, signer), [aliceV])).toEqual({ text, verifiedBy: [alice.name] });
    expect(() => signNote(text, alice.name, { publicKey: bob.publicKey, sign: signer.sign })).toThrow(/does not verify/);
    expect(() => signNote(text, alice.name, { publicKey: alice.publicKey, sign: () => Buffer.alloc(64) })).toThrow(/does not verify/);
    expect(() => signNote(text, alice.name, { publicKey: alice.publicKey, sign: () => Buffer.alloc(3) })).toThrow(/does not verify/);
    expect(() => signNote(text, alice.name, { publicKey: alice.publicKey.subarray(1), sign: signer.sign })).toThrow(/32 bytes/);
  });

  it('throws for an invalid verifier: a configuration error, not a bad note', () => {
    expect(() => openNote(signed, [{ name: 'a b', publicKey: alice.publicKey }])).toThrow(/key name/);
    expect(() => openNote(signed, [{ name: alice.name, publicKey: alice.publicKey.subarray(2) }])).toThrow(/32 bytes/);
  });
});
