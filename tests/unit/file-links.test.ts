/**
 * Signed file links (shared/files/links.ts), the handle scan (handles.ts) and the links map (access.ts), without
 * services: what verifies, what does not, and why.
 */
import { createHmac, hkdfSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { credentialKey } from '../../shared/publishing/credentials.js';
import { fileLinks, rootIssuerOf } from '../../shared/files/access.js';
import { fileHandle, MAX_HANDLES_PER_CALL, scanHandles } from '../../shared/files/handles.js';
import { LINK_TTL_S, signFileLink, uploadLinkUrl, verifyFileLink } from '../../shared/files/links.js';
import { newFileId } from '../../shared/files/store.js';

const SECRET = 'a-file-secret-for-unit-tests-0123456789';
const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const EXP = NOW / 1000 + LINK_TTL_S;
const ID = 'f_AAAAAAAAAAAAAAAAAAAAAA';
const OTHER = 'f_BBBBBBBBBBBBBBBBBBBBBB';
const upload = (id: string) => ({ kind: 'upload' as const, id });

describe('signFileLink / verifyFileLink', () => {
  it('a link verifies for its file until its expiry, and says expired after', () => {
    const sig = signFileLink(SECRET, upload(ID), EXP);
    expect(sig).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(verifyFileLink(SECRET, upload(ID), { exp: String(EXP), sig }, NOW)).toBe('ok');
    expect(verifyFileLink(SECRET, upload(ID), { exp: String(EXP), sig }, EXP * 1000 - 1)).toBe('ok');
    expect(verifyFileLink(SECRET, upload(ID), { exp: String(EXP), sig }, EXP * 1000)).toBe('expired');
  });

  it('is bound to the file, the kind, the expiry and the secret', () => {
    const sig = signFileLink(SECRET, upload(ID), EXP);
    expect(verifyFileLink(SECRET, upload(OTHER), { exp: String(EXP), sig }, NOW)).toBe('invalid');
    expect(verifyFileLink(SECRET, { kind: 'eval', id: ID }, { exp: String(EXP), sig }, NOW)).toBe('invalid');
    expect(verifyFileLink(SECRET, upload(ID), { exp: String(EXP + 1), sig }, NOW)).toBe('invalid');
    expect(verifyFileLink(`${SECRET}x`, upload(ID), { exp: String(EXP), sig }, NOW)).toBe('invalid');
    // An expired link whose expiry was moved forward is not a link at all.
    const old = signFileLink(SECRET, upload(ID), NOW / 1000 - 1);
    expect(verifyFileLink(SECRET, upload(ID), { exp: String(NOW / 1000 - 1), sig: old }, NOW)).toBe('expired');
    expect(verifyFileLink(SECRET, upload(ID), { exp: String(EXP), sig: old }, NOW)).toBe('invalid');
  });

  it('a signature changed in any one character is refused, the last one included (base64url spellings)', () => {
    const sig = signFileLink(SECRET, upload(ID), EXP);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = 0; i < sig.length; i++) {
      for (const c of [alphabet[(alphabet.indexOf(sig[i]!) + 1) % 64]!, alphabet[(alphabet.indexOf(sig[i]!) + 63) % 64]!]) {
        const tampered = sig.slice(0, i) + c + sig.slice(i + 1);
        expect(verifyFileLink(SECRET, upload(ID), { exp: String(EXP), sig: tampered }, NOW), `position ${i}`).toBe('invalid');
      }
    }
  });

  it('malformed or missing parts are invalid, never an error', () => {
    const sig = signFileLink(SECRET, upload(ID), EXP);
    for (const [exp, s] of [
      [undefined, sig],
      [String(EXP), undefined],
      ['', sig],
      ['-1', sig],
      [`${EXP}.0`, sig],
      ['1e9', sig],
      [[String(EXP)], sig],
      [String(EXP), [sig]],
      [String(EXP), `${sig}=`],
      [String(EXP), sig.slice(1)],
      [String(EXP), Buffer.from(createHmac('sha256', 'x').digest()).toString('hex')],
      ['9'.repeat(13), sig],
    ] as Array<[unknown, unknown]>) {
      expect(verifyFileLink(SECRET, upload(ID), { exp, sig: s }, NOW)).toBe('invalid');
    }
    expect(() => signFileLink(SECRET, upload(ID), 1.5)).toThrow(TypeError);
  });

  it('uses its own HKDF key: not the credentials key, not the raw secret', () => {
    const msg = `upload\n${ID}\n${EXP}`;
    const sig = signFileLink(SECRET, upload(ID), EXP);
    const withKey = (key: Buffer | string) => createHmac('sha256', key).update(msg).digest('base64url');
    expect(sig).not.toBe(withKey(credentialKey(SECRET).key));
    expect(sig).not.toBe(withKey(SECRET));
    expect(sig).toBe(withKey(Buffer.from(hkdfSync('sha256', SECRET, 'holon files', 'holon file link v1', 32))));
  });

  it('uploadLinkUrl builds GET /v0/files/{id}?exp&sig on the origin, without a doubled slash', () => {
    const url = new URL(uploadLinkUrl(SECRET, 'https://gw.example.com/', ID, EXP));
    expect(`${url.origin}${url.pathname}`).toBe(`https://gw.example.com/v0/files/${ID}`);
    expect(url.searchParams.get('exp')).toBe(String(EXP));
    expect(verifyFileLink(SECRET, upload(ID), { exp: url.searchParams.get('exp')!, sig: url.searchParams.get('sig')! }, NOW)).toBe('ok');
  });
});

describe('scanHandles', () => {
  it('finds handles at any depth and inside text, each once', () => {
    const a = newFileId();
    const b = newFileId();
    const scan = scanHandles({ file: fileHandle(a), nested: [{ deep: { x: `see ${fileHandle(b)}, and ${fileHandle(a)} again` } }], n: 3, z: null });
    expect(scan.refused).toBeUndefined();
    expect(scan.fileIds.sort()).toEqual([a, b].sort());
    expect(scanHandles({ text: 'no handles here: https://example.com/files/x' })).toEqual({ fileIds: [] });
    // Field names are not scanned.
    expect(scanHandles({ [fileHandle(a)]: 1 })).toEqual({ fileIds: [] });
    // The scheme in any case names the same file.
    expect(scanHandles(['HOLON://FILES/' + a]).fileIds).toEqual([a]);
    // An id ends where its characters end.
    expect(scanHandles(`${fileHandle(a)}/page/2`).fileIds).toEqual([a]);
  });

  it('refuses evaluation fixtures and malformed file handles', () => {
    expect(scanHandles({ f: 'holon://evals/extraction.table/invoice-1.pdf' }).refused).toBe('holon://evals/extraction.table/invoice-1.pdf');
    expect(scanHandles('Holon://Evals/x').refused).toBe('Holon://Evals/x');
    expect(scanHandles({ f: 'holon://files/not-an-id' }).refused).toBe('holon://files/not-an-id');
    expect(scanHandles({ f: 'holon://files/' }).refused).toBe('holon://files/');
    expect(scanHandles({ f: `${fileHandle(ID)}x` }).refused).toBe(`${fileHandle(ID)}x`);
  });

  it('new ids match the handle rule', () => {
    for (let i = 0; i < 50; i++) expect(scanHandles(fileHandle(newFileId())).fileIds).toHaveLength(1);
    expect(MAX_HANDLES_PER_CALL).toBe(20);
  });
});

describe('rootIssuerOf and fileLinks', () => {
  it('the root issuer of a sub-mandate is the account its id starts with', () => {
    expect(rootIssuerOf({ id: 'alice/work', issuer: 'alice', depth: 0 })).toBe('alice');
    expect(rootIssuerOf({ id: 'alice/work.r_1.r_2', issuer: 'examples/digest', depth: 2 })).toBe('alice');
  });

  it('links are valid 15 minutes, or until the file is deleted if sooner', () => {
    const file = (id: string, expiresAt: number) => ({
      id,
      owner: 'alice',
      contentType: 'application/pdf',
      size: 10,
      sha256: 'a'.repeat(64),
      createdAt: new Date(expiresAt - 86_400_000),
      expiresAt: new Date(expiresAt),
    });
    const links = fileLinks({ secret: SECRET, origin: () => 'http://127.0.0.1:9' }, [file(ID, NOW + 86_000_000), file(OTHER, NOW + 60_000)], NOW);
    expect(Object.keys(links)).toEqual([fileHandle(ID), fileHandle(OTHER)]);
    expect(links[fileHandle(ID)]).toMatchObject({
      content_type: 'application/pdf',
      size: 10,
      sha256: 'a'.repeat(64),
      expires: new Date(EXP * 1000).toISOString(),
    });
    expect(links[fileHandle(OTHER)]!.expires).toBe(new Date(NOW + 60_000).toISOString());
    const url = new URL(links[fileHandle(ID)]!.url);
    expect(verifyFileLink(SECRET, upload(ID), { exp: url.searchParams.get('exp')!, sig: url.searchParams.get('sig')! }, NOW)).toBe('ok');
  });
});
