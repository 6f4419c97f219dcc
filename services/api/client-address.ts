/**
 * The address a request comes from, for rate limits (gateway.md §7: "per the address the trusted proxy
 * appended", so "a forged `X-Forwarded-For` buys nothing").
 *
 * - trustProxy (HOLON_TRUST_PROXY=1, behind exactly one proxy such as Railway): the LAST entry of
 *   `X-Forwarded-For`, which the proxy appended from the connection it accepted. Every entry before it was
 *   sent by the client and is ignored. When the header is absent, or its last entry is empty or not an IP
 *   address, the socket's address is used (the proxy's own address: such requests share one bucket, which
 *   errs on the side of limiting).
 * - no trustProxy (HOLON_TRUST_PROXY=0, exposed directly): the socket's address; the header is ignored.
 *
 * Addresses are normalised: IPv4-mapped IPv6 (`::ffff:1.2.3.4`) becomes `1.2.3.4`, IPv6 is lower-cased, and
 * a port some proxies add (`1.2.3.4:5678`, `[2001:db8::1]:443`) is dropped.
 * Express's own `trust proxy` setting is deliberately not used: `req.ip` with it depends on a hop count or
 * subnet list being configured right, and this rule is the whole of what the gateway needs.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';

/** What clientAddress reads from a request (an express.Request has both). */
export interface AddressSource {
  headers: IncomingHttpHeaders;
  socket: { remoteAddress?: string | undefined };
}

/** The address when the socket has none (already closed): such requests share one bucket. */
export const UNKNOWN_ADDRESS = 'unknown';

export function clientAddress(req: AddressSource, trustProxy: boolean): string {
  if (trustProxy) {
    const appended = lastForwarded(req.headers['x-forwarded-for']);
    if (appended !== undefined) return appended;
  }
  return normaliseAddress(req.socket.remoteAddress) ?? UNKNOWN_ADDRESS;
}

/** The last entry of X-Forwarded-For (repeated headers count as one list), when it is an IP address. */
function lastForwarded(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const joined = Array.isArray(header) ? header.join(',') : header;
  const entries = joined.split(',');
  return normaliseAddress(entries[entries.length - 1]);
}

/** A canonical form of an IP address, or undefined when `raw` is not one. */
export function normaliseAddress(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let a = raw.trim();
  if (a === '') return undefined;
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(a);
  if (bracketed) a = bracketed[1]!;
  else {
    const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(a);
    if (v4WithPort) a = v4WithPort[1]!;
  }
  const family = isIP(a);
  if (family === 4) return a;
  if (family !== 6) return undefined;
  const canonical = canonicalIpv6(a);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped) {
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return canonical;
}

/** RFC 5952 form through the WHATWG URL parser (`::FFFF:1.2.3.4` → `::ffff:102:304`); as-is, lower-cased, when it refuses (zone ids). */
function canonicalIpv6(a: string): string {
  try {
    return new URL(`http://[${a}]/`).hostname.slice(1, -1);
  } catch {
    return a.toLowerCase();
  }
}
