/**
 * Client ID metadata documents and PKCE, the pure parts (shared/accounts/client-metadata.ts, mcp-sign-in.ts): the
 * shape of a client_id, a document checked against its URL, which redirect URIs a client may be sent to (a loopback
 * one on any port), the S256 challenge of RFC 7636's own example, and resource indicators compared in canonical form.
 * The fetch itself, through the guarded client, is tested against a TLS server in tests/integration/mcp-sign-in.test.ts.
 */
import { describe, expect, test } from 'vitest';
import {
  CLIENT_DOCUMENT_MAX_BYTES,
  ClientRefused,
  clientIdUrl,
  isLoopbackRedirect,
  readClientDocument,
  redirectAllowed,
} from '../../shared/accounts/client-metadata.js';
import { canonicalResource, s256 } from '../../shared/accounts/mcp-sign-in.js';

const ID = 'https://app.example.com/oauth/client.json';
const doc = (extra: Record<string, unknown> = {}) => ({ client_id: ID, client_name: 'Example', redirect_uris: ['http://127.0.0.1:3000/callback'], ...extra });

describe('client_id', () => {
  test('an https URL with a path, without credentials, fragment or dot segments', () => {
    expect(clientIdUrl(ID).host).toBe('app.example.com');
    for (const bad of [
      'app.example.com/c.json',
      'http://app.example.com/c.json',
      'https://app.example.com',
      'https://app.example.com/',
      'https://u:p@app.example.com/c.json',
      'https://app.example.com/c.json#x',
      'https://app.example.com/a/../c.json',
      'https://app.example.com/./c.json',
    ]) {
      expect(() => clientIdUrl(bad), bad).toThrow(ClientRefused);
    }
  });
});

describe('the document', () => {
  test('names itself exactly, has a name and redirect URIs, and is a public client’s', () => {
    expect(readClientDocument(ID, doc({ client_name: '  Example  ', grant_types: ['authorization_code'], response_types: ['code'] }))).toEqual({
      clientId: ID,
      name: 'Example',
      redirectUris: ['http://127.0.0.1:3000/callback'],
    });
    const refusals: Array<[unknown, RegExp]> = [
      [[], /not a JSON object/],
      [doc({ client_id: `${ID}?x=1` }), /does not name itself/],
      [doc({ client_name: '' }), /client_name/],
      [doc({ client_name: 'x'.repeat(201) }), /client_name/],
      [doc({ redirect_uris: [] }), /redirect_uris/],
      [doc({ redirect_uris: 'http://127.0.0.1/cb' }), /redirect_uris/],
      [doc({ redirect_uris: [7] }), /redirect_uris/],
      [doc({ client_secret: 'x' }), /only public clients/],
      [doc({ token_endpoint_auth_method: 'private_key_jwt' }), /only public clients/],
      [doc({ grant_types: ['client_credentials'] }), /authorization_code/],
      [doc({ response_types: ['token'] }), /code response type/],
    ];
    for (const [body, words] of refusals) expect(() => readClientDocument(ID, body), JSON.stringify(body)).toThrow(words);
    expect(CLIENT_DOCUMENT_MAX_BYTES).toBe(5120);
  });

  test('redirect URIs: listed ones exactly, a loopback one on any port; https or loopback http only, no fragment', () => {
    const d = readClientDocument(
      ID,
      doc({ redirect_uris: ['http://127.0.0.1:3000/callback', 'http://localhost/cb', 'https://app.example.com/cb?x=1', 'myapp:/cb'] }),
    );
    for (const ok of ['http://127.0.0.1:3000/callback', 'http://127.0.0.1:49152/callback', 'http://localhost:8080/cb', 'https://app.example.com/cb?x=1']) {
      expect(redirectAllowed(d, ok), ok).toBe(true);
    }
    for (const no of [
      'http://127.0.0.1:3000/other',
      'http://[::1]:3000/callback',
      'https://app.example.com/cb',
      'https://app.example.com:444/cb?x=1',
      'http://app.example.com/cb?x=1',
      'myapp:/cb',
      'http://127.0.0.1:3000/callback#f',
      'not a url',
    ]) {
      expect(redirectAllowed(d, no), no).toBe(false);
    }
    expect(isLoopbackRedirect('http://[::1]:9/cb')).toBe(true);
    expect(isLoopbackRedirect('https://127.0.0.1/cb')).toBe(false);
  });
});

describe('PKCE and resources', () => {
  test('S256 is RFC 7636’s example; a resource compares in canonical form', () => {
    expect(s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
    expect(canonicalResource('HTTPS://Gateway.Example.com/mcp/')).toBe('https://gateway.example.com/mcp');
    expect(canonicalResource('https://gateway.example.com:443/mcp')).toBe('https://gateway.example.com/mcp');
    for (const bad of ['gateway.example.com/mcp', 'https://gateway.example.com/mcp#x', 'ftp://gateway.example.com/mcp'])
      expect(canonicalResource(bad), bad).toBeUndefined();
  });
});
