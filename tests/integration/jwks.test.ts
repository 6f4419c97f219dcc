/**
 * GET /.well-known/jwks.json (services/api/routes/jwks.ts, shared/signing/): public on a hosted gateway (no key),
 * cached five minutes; the current key verifies what the gateway's signing key signs, its kid is its RFC 7638
 * thumbprint; a retired key of HOLON_RETIRED_KEYS is listed with its retired_at; no private part anywhere; the route
 * is in the OpenAPI document.
 */
import { generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, compactVerify, importJWK } from 'jose';
import { describe, expect, test } from 'vitest';
import type { Schema } from '../support/http.js';
import { startTestGateway } from '../support/gateway.js';
import { send } from '../support/hosted.js';

describe('GET /.well-known/jwks.json', () => {
  test('the public key set: verifies the gateway key, kid = thumbprint, retired keys with their time, never "d"', async () => {
    const retiredX = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!;
    const retiredKeys = JSON.stringify([{ kty: 'OKP', crv: 'Ed25519', x: retiredX, retired_at: '2026-01-31T23:00:00Z' }]);
    const g = await startTestGateway({ roles: ['api'], hosted: true, config: { retiredKeys } });
    try {
      const raw = await fetch(`${g.url}/.well-known/jwks.json`);
      expect(raw.status).toBe(200);
      expect(raw.headers.get('cache-control')).toBe('public, max-age=300');
      expect(raw.headers.get('content-type')).toMatch(/^application\/json/);
      const text = await raw.text();
      expect(text).not.toMatch(/"d"/);
      // Checked against the OpenAPI document's KeySet too (response-check.ts), with no key sent.
      const { status, body } = await send<Schema<'KeySet'>>(g.url, 'GET', '/.well-known/jwks.json');
      expect(status).toBe(200);
      expect(body).toEqual(JSON.parse(text));
      const [current, retired, ...rest] = body.keys;
      expect(rest).toEqual([]);

      const key = g.gw.signingKey!;
      expect(current).toEqual({ kty: 'OKP', crv: 'Ed25519', x: key.publicJwk.x, kid: key.kid, alg: 'EdDSA', use: 'sig' });
      expect(current!.kid).toBe(await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: current!.x }, 'sha256'));
      const payload = new TextEncoder().encode('{"receipt":"r_1"}');
      const jws = await key.signCompact(payload);
      const verified = await compactVerify(jws, await importJWK({ ...current! }, 'EdDSA'));
      expect(verified.protectedHeader.kid).toBe(current!.kid);
      expect(new TextDecoder().decode(verified.payload)).toBe('{"receipt":"r_1"}');
      // The retired key does not verify what the current key signs.
      await expect(compactVerify(jws, await importJWK({ ...retired! }, 'EdDSA'))).rejects.toThrow();

      expect(retired).toEqual({
        kty: 'OKP',
        crv: 'Ed25519',
        x: retiredX,
        kid: await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: retiredX }, 'sha256'),
        alg: 'EdDSA',
        use: 'sig',
        retired_at: '2026-01-31T23:00:00.000Z',
      });

      const doc = (await send(g.url, 'GET', '/v0/openapi.json')).body as { paths: Record<string, { get?: { security?: unknown } }> };
      expect(doc.paths['/.well-known/jwks.json']?.get).toMatchObject({ security: [] });
    } finally {
      await g.stop();
    }
  });
});
