import { describe, expect, it } from 'vitest';
import { clientAddress, normaliseAddress, UNKNOWN_ADDRESS, type AddressSource } from '../../services/api/client-address.js';

function req(remoteAddress: string | undefined, xff?: string | string[]): AddressSource {
  return { headers: xff === undefined ? {} : { 'x-forwarded-for': xff }, socket: { remoteAddress } };
}

describe('clientAddress with a trusted proxy', () => {
  it('takes the last X-Forwarded-For entry, the one the proxy appended', () => {
    expect(clientAddress(req('10.0.0.2', '203.0.113.7'), true)).toBe('203.0.113.7');
    expect(clientAddress(req('10.0.0.2', '1.2.3.4, 203.0.113.7'), true)).toBe('203.0.113.7');
    expect(clientAddress(req('10.0.0.2', ' 1.2.3.4 ,5.6.7.8,  203.0.113.7  '), true)).toBe('203.0.113.7');
  });

  it('ignores forged earlier entries: they buy nothing', () => {
    const a = clientAddress(req('10.0.0.2', '1.2.3.4, 203.0.113.7'), true);
    const b = clientAddress(req('10.0.0.2', '9.9.9.9, 8.8.8.8, 203.0.113.7'), true);
    const c = clientAddress(req('10.0.0.2', 'not-an-ip, 203.0.113.7'), true);
    expect(new Set([a, b, c])).toEqual(new Set(['203.0.113.7']));
  });

  it('treats repeated headers as one list', () => {
    expect(clientAddress(req('10.0.0.2', ['1.2.3.4', '198.51.100.1']), true)).toBe('198.51.100.1');
  });

  it('falls back to the socket when the header is absent, or its last entry is empty or not an address', () => {
    expect(clientAddress(req('10.0.0.2'), true)).toBe('10.0.0.2');
    expect(clientAddress(req('10.0.0.2', ''), true)).toBe('10.0.0.2');
    expect(clientAddress(req('10.0.0.2', '1.2.3.4,'), true)).toBe('10.0.0.2');
    expect(clientAddress(req('10.0.0.2', '1.2.3.4, '), true)).toBe('10.0.0.2');
    expect(clientAddress(req('10.0.0.2', '1.2.3.4, unknown'), true)).toBe('10.0.0.2');
    expect(clientAddress(req('10.0.0.2', '1.2.3.4, 999.1.1.1'), true)).toBe('10.0.0.2');
    expect(clientAddress(req('::ffff:10.0.0.2', '1.2.3.4, 203.0.113.7 junk'), true)).toBe('10.0.0.2');
  });

  it('normalises the appended address', () => {
    expect(clientAddress(req('10.0.0.2', '::ffff:203.0.113.7'), true)).toBe('203.0.113.7');
    expect(clientAddress(req('10.0.0.2', '2001:DB8:0:0::1'), true)).toBe('2001:db8::1');
    expect(clientAddress(req('10.0.0.2', '203.0.113.7:51234'), true)).toBe('203.0.113.7');
    expect(clientAddress(req('10.0.0.2', '[2001:db8::1]:443'), true)).toBe('2001:db8::1');
  });
});

describe('clientAddress without a trusted proxy', () => {
  it('uses the socket address and ignores X-Forwarded-For entirely', () => {
    expect(clientAddress(req('198.51.100.9', '1.2.3.4'), false)).toBe('198.51.100.9');
    expect(clientAddress(req('198.51.100.9', '1.2.3.4, 5.6.7.8'), false)).toBe('198.51.100.9');
    expect(clientAddress(req('198.51.100.9'), false)).toBe('198.51.100.9');
  });

  it('normalises IPv4-mapped IPv6 socket addresses', () => {
    expect(clientAddress(req('::ffff:198.51.100.9'), false)).toBe('198.51.100.9');
    expect(clientAddress(req('::ffff:127.0.0.1'), false)).toBe('127.0.0.1');
    expect(clientAddress(req('::1'), false)).toBe('::1');
  });

  it('names a socket without an address "unknown"', () => {
    expect(clientAddress(req(undefined), false)).toBe(UNKNOWN_ADDRESS);
    expect(clientAddress(req(undefined), true)).toBe(UNKNOWN_ADDRESS);
  });
});

describe('normaliseAddress', () => {
  it.each([
    ['1.2.3.4', '1.2.3.4'],
    ['::FFFF:1.2.3.4', '1.2.3.4'],
    ['0:0:0:0:0:ffff:1.2.3.4', '1.2.3.4'],
    ['::ffff:7f00:1', '127.0.0.1'],
    ['2001:0db8::0001', '2001:db8::1'],
    ['fe80::1%eth0', 'fe80::1%eth0'],
  ])('%s → %s', (raw, expected) => {
    expect(normaliseAddress(raw)).toBe(expected);
  });

  it.each(['', ' ', 'localhost', '1.2.3', '1.2.3.4.5', '256.1.1.1', 'unknown', '_hidden'])('%j is not an address', (raw) => {
    expect(normaliseAddress(raw)).toBeUndefined();
  });
});
