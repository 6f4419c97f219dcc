/**
 * Network safety for outbound requests to addresses chosen by users: callback URLs and published agents'
 * endpoints (shared/runtimes/published.ts; gateway.md §7, "Publishing agents" → "Network safety").
 *
 * Three pieces:
 * - `addressClass` / `isPublicAddress`: judge one IP address against exact CIDR tables (IANA special-purpose
 *   registries). IPv6 forms that carry an IPv4 address (IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16) are
 *   judged by that IPv4 address. Anything that is not a syntactically valid IP (including legacy forms such as
 *   `0177.0.0.1`) is not public.
 * - `createGuardedDispatcher`: an undici `Agent` that checks the address it ACTUALLY connects to, on every new
 *   connection. Host names are resolved by a `lookup` hook handed to net.connect / tls.connect: it resolves
 *   every address (`all: true`), refuses the connection when ANY of them is not public, and hands only the
 *   checked addresses back to Node, so Node connects to nothing else. A host name that was public when it was
 *   submitted and private now (DNS rebinding) is therefore refused at call time. IP-literal hosts never reach
 *   `lookup` (Node skips it for IP literals), so the connector checks them itself before connecting.
 * - `createGuardedFetch`: a fetch over such a dispatcher that never follows a redirect: a 3xx answer fails the
 *   request with a `RedirectRefusedError` (for clients that need a fetch, such as the MCP SDK's transport).
 * - `assertPublicUrl`: the submission-time check of a URL (scheme, no credentials, resolves only to public
 *   addresses), failing with a HolonError `invalid_request` (400). It is a courtesy to the user; the dispatcher
 *   is the real guard, because DNS answers change.
 *
 * Redirects are NOT followed by this client, and must stay so: undici's `request()` / `dispatcher.request()`
 * return a 3xx response as is unless the dispatcher is composed with `interceptors.redirect` — never compose
 * it. Beware undici's (and Node's) `fetch`, which follows redirects by default: use `createGuardedFetch`, which
 * forces `redirect: 'manual'` and refuses a 3xx answer. Each hop would still go through the address check, but
 * the spec says redirects are not followed.
 *
 * Not covered here (the caller's job): response size and total-time limits, and HTTP proxies (an undici
 * `Agent` ignores HTTP(S)_PROXY; do not wrap this in a ProxyAgent, which would move the connection to the proxy).
 */
import dns from 'node:dns';
import net from 'node:net';
import { Agent, buildConnector, type Dispatcher, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';
import { HolonError } from '../core/errors.js';

/** Why an address is refused. `null` from `addressClass` means public. */
export type AddressClass =
  | 'invalid'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cloud metadata'
  | 'carrier-grade NAT'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'discard'
  | 'Teredo';

/** The code of the error a refused connection fails with. */
export const ADDRESS_REFUSED = 'HOLON_ADDRESS_REFUSED';
/** The code of the error a redirect fails with in `createGuardedFetch`. */
export const REDIRECT_REFUSED = 'HOLON_REDIRECT_REFUSED';

/** What the guard refuses a request with. The message names the host (as the URL gave it), never the URL. */
export abstract class GuardRefusalError extends Error {
  constructor(
    readonly code: typeof ADDRESS_REFUSED | typeof REDIRECT_REFUSED,
    /** The host as the URL gave it (a name or an IP literal). */
    readonly hostname: string,
    message: string,
  ) {
    super(message);
  }
}

/** A connection refused by the guard: the message says the class of the address. */
export class AddressRefusedError extends GuardRefusalError {
  override readonly name = 'AddressRefusedError';
  constructor(
    hostname: string,
    /** The refused address (for logs; not in the message). */
    readonly address: string,
    readonly addressClass: AddressClass,
  ) {
    const what = net.isIP(hostname) ? 'is' : 'resolves to';
    super(ADDRESS_REFUSED, hostname, `address refused: ${hostname} ${what} ${article(addressClass)} ${addressClass} address`);
  }
}

/** A redirect answered to `createGuardedFetch` (or seen by a caller of the dispatcher): refused, not followed. */
export class RedirectRefusedError extends GuardRefusalError {
  override readonly name = 'RedirectRefusedError';
  constructor(
    hostname: string,
    readonly status: number,
  ) {
    super(REDIRECT_REFUSED, hostname, `redirect refused: ${hostname} answered ${status}, and redirects are not followed`);
  }
}

function article(word: string): string {
  return /^[aeiouAEIOU]/.test(word) ? 'an' : 'a';
}

// ---------------------------------------------------------------------------------------------------------
// Address tables
// ---------------------------------------------------------------------------------------------------------

interface V4Rule {
  base: number;
  bits: number;
  cls: AddressClass;
}

function v4Rule(cidr: string, cls: AddressClass): V4Rule {
  const [ip, bits] = cidr.split('/') as [string, string];
  const base = parseV4(ip);
  if (base === null) throw new Error(`bad rule ${cidr}`);
  return { base, bits: Number(bits), cls };
}

/** First match wins: the more specific rules come first. */
const V4_RULES: readonly V4Rule[] = [
  v4Rule('0.0.0.0/8', 'unspecified'), // "this network"; 0.0.0.0 connects to the local host on Linux
  v4Rule('10.0.0.0/8', 'private'),
  v4Rule('100.64.0.0/10', 'carrier-grade NAT'), // also Alibaba Cloud's metadata 100.100.100.200
  v4Rule('127.0.0.0/8', 'loopback'),
  v4Rule('169.254.169.254/32', 'cloud metadata'), // AWS, GCP, Azure, …
  v4Rule('169.254.0.0/16', 'link-local'),
  v4Rule('172.16.0.0/12', 'private'),
  v4Rule('192.0.0.0/24', 'reserved'), // IETF protocol assignments (incl. Oracle Cloud's 192.0.0.192)
  v4Rule('192.0.2.0/24', 'documentation'), // TEST-NET-1
  v4Rule('192.88.99.0/24', 'reserved'), // deprecated 6to4 relay anycast
  v4Rule('192.168.0.0/16', 'private'),
  v4Rule('198.18.0.0/15', 'benchmarking'),
  v4Rule('198.51.100.0/24', 'documentation'), // TEST-NET-2
  v4Rule('203.0.113.0/24', 'documentation'), // TEST-NET-3
  v4Rule('224.0.0.0/4', 'multicast'),
  v4Rule('255.255.255.255/32', 'broadcast'),
  v4Rule('240.0.0.0/4', 'reserved'),
];

type V6Action = AddressClass | 'embedded-v4-low32' | 'embedded-v4-6to4';

interface V6Rule {
  base: bigint;
  bits: number;
  action: V6Action;
}

function v6Rule(cidr: string, action: V6Action): V6Rule {
  const [ip, bits] = cidr.split('/') as [string, string];
  const base = parseV6(ip);
  if (base === null) throw new Error(`bad rule ${cidr}`);
  return { base, bits: Number(bits), action };
}

/**
 * First match wins. Everything outside 2000::/3 (global unicast) that no rule names is refused as reserved
 * (IPv4-compatible ::/96, 64:ff9b:1::/48 local-use NAT64, deprecated site-local fec0::/10, unassigned space).
 */
const V6_RULES: readonly V6Rule[] = [
  v6Rule('::/128', 'unspecified'),
  v6Rule('::1/128', 'loopback'),
  v6Rule('::ffff:0:0/96', 'embedded-v4-low32'), // IPv4-mapped
  v6Rule('64:ff9b::/96', 'embedded-v4-low32'), // NAT64 well-known prefix
  v6Rule('100::/64', 'discard'),
  v6Rule('2001::/32', 'Teredo'), // tunnels to an obfuscated IPv4 address: refused outright
  v6Rule('2001:2::/48', 'benchmarking'),
  v6Rule('2001:db8::/32', 'documentation'),
  v6Rule('2001::/23', 'reserved'), // the rest of the IETF protocol assignments (ORCHID, AMT, AS112, …)
  v6Rule('2002::/16', 'embedded-v4-6to4'), // 6to4: 2002:AABB:CCDD::/48 carries AA.BB.CC.DD
  v6Rule('3fff::/20', 'documentation'), // RFC 9637
  v6Rule('5f00::/16', 'reserved'), // SRv6 SIDs, not globally reachable
  v6Rule('fc00::/7', 'private'), // unique local (incl. AWS's IPv6 metadata fd00:ec2::254)
  v6Rule('fe80::/10', 'link-local'),
  v6Rule('fec0::/10', 'private'), // deprecated site-local
  v6Rule('ff00::/8', 'multicast'),
];

const GLOBAL_UNICAST = v6Rule('2000::/3', 'reserved');

function inV4(addr: number, rule: V4Rule): boolean {
  if (rule.bits === 0) return true;
  const shift = 32 - rule.bits;
  return addr >>> shift === rule.base >>> shift;
}

function inV6(addr: bigint, rule: { base: bigint; bits: number }): boolean {
  const shift = BigInt(128 - rule.bits);
  return addr >> shift === rule.base >> shift;
}

/** Dotted-quad IPv4 (as `net.isIPv4` accepts it) → unsigned 32-bit number; null when not one. */
function parseV4(ip: string): number | null {
  if (!net.isIPv4(ip)) return null;
  const parts = ip.split('.').map(Number);
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

/** IPv6 text (any valid form, zone id dropped, trailing dotted quad allowed) → 128-bit bigint; null when not one. */
function parseV6(input: string): bigint | null {
  const ip = input.split('%')[0]!;
  if (!net.isIPv6(ip)) return null;
  const halves = ip.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string): number[] | null => {
    if (s === '') return [];
    const out: number[] = [];
    const parts = s.split(':');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (i === parts.length - 1 && p.includes('.')) {
        const v4 = parseV4(p);
        if (v4 === null) return null;
        out.push(v4 >>> 16, v4 & 0xffff);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return null;
        out.push(parseInt(p, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (head === null || tail === null) return null;
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  if (fill < 0 || head.length + fill + tail.length !== 8) return null;
  let value = 0n;
  for (const g of [...head, ...new Array<number>(fill).fill(0), ...tail]) value = (value << 16n) | BigInt(g);
  return value;
}

function classifyV4(addr: number): AddressClass | null {
  for (const rule of V4_RULES) if (inV4(addr, rule)) return rule.cls;
  return null;
}

function classifyV6(addr: bigint): AddressClass | null {
  for (const rule of V6_RULES) {
    if (!inV6(addr, rule)) continue;
    switch (rule.action) {
      case 'embedded-v4-low32':
        return classifyV4(Number(addr & 0xffffffffn));
      case 'embedded-v4-6to4':
        return classifyV4(Number((addr >> 80n) & 0xffffffffn));
      default:
        return rule.action;
    }
  }
  return inV6(addr, GLOBAL_UNICAST) ? null : 'reserved';
}

/**
 * The class that makes `ip` non-public, or null when it is public. `ip` is a bare address: no brackets, no
 * port (an IPv6 zone id is accepted and ignored). A string that is not an IP address is `'invalid'`.
 */
export function addressClass(ip: string): AddressClass | null {
  const v4 = parseV4(ip);
  if (v4 !== null) return classifyV4(v4);
  const v6 = parseV6(ip);
  if (v6 !== null) return classifyV6(v6);
  return 'invalid';
}

/** True when `ip` is a public (globally reachable unicast) address that user-chosen requests may reach. */
export function isPublicAddress(ip: string): boolean {
  return addressClass(ip) === null;
}

// ---------------------------------------------------------------------------------------------------------
// The dispatcher
// ---------------------------------------------------------------------------------------------------------

/** The resolver the guard uses: `dns.lookup` with `all: true` (injectable for tests). */
export type LookupAll = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

export interface GuardedDispatcherOptions {
  /** Lift the check (local development only: HOLON_ALLOW_PRIVATE_ENDPOINTS=1). Default false. */
  allowPrivate?: boolean;
  /** Time allowed to resolve and connect (TLS included), in milliseconds. Default 10 000. */
  connectTimeoutMs?: number;
  /** Resolver, default `dns.lookup`. Tests inject a fake to simulate DNS rebinding. */
  lookup?: LookupAll;
  /**
   * Tests only: where an address that PASSED the check is dialled, e.g. a public address the fake resolver answers
   * standing in for a test server on 127.0.0.1. It is applied after the check, to checked addresses only, so the
   * verdict is always the production tables' verdict on what the resolver answered; the runner never sets it.
   */
  route?: (address: string) => string;
  /** Extra trusted certificate authorities for TLS (tests: a self-signed test server). Default: Node's. */
  ca?: string | Buffer | Array<string | Buffer>;
}

/** The options Node's net.connect passes to its `lookup` hook (all: true when it tries several addresses). */
interface NetLookupOptions {
  family?: number;
  hints?: number;
  all?: boolean;
  [key: string]: unknown;
}

type NetLookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** The `lookup` hook handed to net.connect / tls.connect: resolve everything, refuse if anything is private. */
function guardedLookup(resolve: LookupAll, allowPrivate: boolean, route: ((address: string) => string) | undefined) {
  return (hostname: string, options: NetLookupOptions, callback: NetLookupCallback): void => {
    const { all, ...rest } = options;
    resolve(hostname, { ...(rest as dns.LookupOptions), all: true }, (err, addresses) => {
      if (err) return callback(err, all ? [] : '', undefined);
      const list = addresses ?? [];
      if (list.length === 0) {
        const e: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        e.code = 'ENOTFOUND';
        return callback(e, all ? [] : '', undefined);
      }
      if (!allowPrivate) {
        for (const a of list) {
          const cls = addressClass(a.address);
          if (cls !== null) return callback(new AddressRefusedError(hostname, a.address, cls), all ? [] : '', undefined);
        }
      }
      // Only the addresses just checked go back to Node, so the socket connects to one of them and nothing else.
      const dialled = route ? list.map(routed(route)) : list;
      if (all) return callback(null, dialled);
      const first = dialled[0]!;
      return callback(null, first.address, first.family);
    });
  };
}

function routed(route: (address: string) => string) {
  return (a: dns.LookupAddress): dns.LookupAddress => {
    const address = route(a.address);
    return { address, family: net.isIPv6(address) ? 6 : 4 };
  };
}

/**
 * An undici Agent for requests to user-chosen addresses. Use it with undici's `request` (which does not
 * follow redirects): `request(url, { dispatcher })`. Every new connection is checked; a refused one fails
 * the request with an `AddressRefusedError` (`code: 'HOLON_ADDRESS_REFUSED'`). Share one Agent per process:
 * pooled keep-alive connections were checked when they were opened.
 */
export function createGuardedDispatcher(options: GuardedDispatcherOptions = {}): Agent {
  const allowPrivate = options.allowPrivate ?? false;
  const resolve: LookupAll = options.lookup ?? (dns.lookup as LookupAll);
  const base = buildConnector({
    timeout: options.connectTimeoutMs ?? 10_000,
    // Passed through by undici to net.connect / tls.connect, which call it for every host name they resolve.
    lookup: guardedLookup(resolve, allowPrivate, options.route) as unknown as net.LookupFunction,
    ...(options.ca !== undefined ? { ca: options.ca } : {}),
  });
  const connect: buildConnector.connector = (opts, callback) => {
    // Node's net.connect skips `lookup` for IP literals, so those are judged here. undici has already
    // stripped the brackets of an IPv6 literal.
    const host = opts.hostname;
    if (!allowPrivate && net.isIP(host)) {
      const cls = addressClass(host);
      if (cls !== null) {
        const err = new AddressRefusedError(host, host, cls);
        process.nextTick(() => callback(err, null));
        return;
      }
    }
    base(opts, callback);
  };
  return new Agent({ connect });
}

/** `err`, or the first of its `cause`s, whose `code` is one of `codes`. */
function findCode(err: unknown, codes: readonly string[]): Error | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && codes.includes(code)) return e as Error;
  }
  return undefined;
}

/** True when `err` (or its `cause`) is a connection refused by the guard. */
export function isAddressRefused(err: unknown): err is AddressRefusedError {
  return findCode(err, [ADDRESS_REFUSED]) !== undefined;
}

/** The guard's refusal inside `err` (a refused address, or a refused redirect), if it is one. */
export function guardRefusal(err: unknown): GuardRefusalError | undefined {
  return findCode(err, [ADDRESS_REFUSED, REDIRECT_REFUSED]) as GuardRefusalError | undefined;
}

// ---------------------------------------------------------------------------------------------------------
// A fetch that never follows redirects
// ---------------------------------------------------------------------------------------------------------

/** The shape of `fetch` (WHATWG), as clients such as the MCP SDK take it. */
export type FetchFunction = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A fetch through `dispatcher` (a guarded one) that never follows a redirect: `redirect: 'manual'` is forced,
 * and a 3xx answer is not returned but fails the request with a `RedirectRefusedError` (its body discarded).
 */
export function createGuardedFetch(dispatcher: Dispatcher): FetchFunction {
  return async (url, init = {}) => {
    const target = typeof url === 'string' ? new URL(url) : url;
    const response = await undiciFetch(target, { ...(init as UndiciRequestInit), redirect: 'manual', dispatcher });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => undefined);
      throw new RedirectRefusedError(target.hostname, response.status);
    }
    return response as unknown as Response;
  };
}

// ---------------------------------------------------------------------------------------------------------
// Submission-time check
// ---------------------------------------------------------------------------------------------------------

export interface AssertPublicUrlOptions {
  /** JSON path of the field, for the problem. Default `$`. */
  path?: string;
  /** Resolver, default `dns.lookup`. */
  lookup?: LookupAll;
  /** Time allowed to resolve the host name, in milliseconds. Default 5 000. */
  timeoutMs?: number;
}

/**
 * Check a user-submitted URL: http or https only, no user name or password, and its host — an IP literal, or
 * a name resolved now — only public addresses (skipped when `allowPrivate`). Throws HolonError
 * `invalid_request` (400) with one problem at `options.path`. Passing does not make later requests safe (DNS
 * changes): requests must still go through `createGuardedDispatcher`.
 */
export async function assertPublicUrl(url: string, allowPrivate: boolean, options: AssertPublicUrlOptions = {}): Promise<void> {
  const path = options.path ?? '$';
  const fail = (message: string): never => {
    throw new HolonError('invalid_request', `invalid URL: ${message}`, [{ path, message }]);
  };

  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return fail('not a valid absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return fail('the scheme must be http or https');
  if (parsed.username !== '' || parsed.password !== '') return fail('the URL must not contain a user name or password');
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  if (host === '') return fail('the URL has no host');
  if (allowPrivate) return;

  if (net.isIP(host)) {
    const cls = addressClass(host);
    if (cls !== null) fail(`the host is ${article(cls)} ${cls} address; only public addresses are allowed`);
    return;
  }

  const resolve = options.lookup ?? (dns.lookup as LookupAll);
  const timeoutMs = options.timeoutMs ?? 5_000;
  let addresses: dns.LookupAddress[];
  try {
    addresses = await new Promise<dns.LookupAddress[]>((ok, ko) => {
      const timer = setTimeout(() => ko(Object.assign(new Error('DNS timeout'), { code: 'ETIMEOUT' })), timeoutMs);
      timer.unref();
      resolve(host, { all: true }, (err, list) => {
        clearTimeout(timer);
        if (err) ko(err);
        else ok(list ?? []);
      });
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return fail(code === 'ENOTFOUND' || code === 'ENODATA' ? 'the host name does not resolve' : 'the host name could not be resolved right now; try again');
  }
  if (addresses.length === 0) return fail('the host name does not resolve');
  for (const a of addresses) {
    const cls = addressClass(a.address);
    if (cls !== null) fail(`the host name resolves to ${article(cls)} ${cls} address; only public addresses are allowed`);
  }
}
