/**
 * What went wrong on the network, in plain words, for the messages and log lines that name a failed endpoint (the
 * remote runtimes' runtime_unavailable, a webhook delivery's failed attempt). Node and undici put the reason in a
 * `code` on the error, its `cause` or, for a connection tried on several addresses, its `errors`: every one is
 * looked at. Never the URL's credentials or query string: describeEndpoint keeps the origin and path only.
 */

type NetworkCause = 'refused' | 'dns' | 'tls' | 'timeout' | 'unreachable' | 'closed' | 'protocol' | 'other';

export interface NetworkFailure {
  cause: NetworkCause;
  /** The code that decided it (`ECONNREFUSED`, `UND_ERR_CONNECT_TIMEOUT`, `CERT_HAS_EXPIRED`, …), when there is one. */
  code?: string;
  /** What happened, in words: `connection refused`, `the name did not resolve`, `TLS failed: …`. */
  text: string;
}

const DNS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);
const UNREACHABLE = new Set(['EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'EADDRNOTAVAIL']);
const TIMEOUT = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ABORT_ERR', 'UND_ERR_ABORTED']);
const CLOSED = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH']);

/** Every string `code` on an error, its causes and aggregated errors (Node and undici network errors). */
export function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  const visit = (e: unknown, depth: number): void => {
    if (depth > 3 || typeof e !== 'object' || e === null) return;
    const { code, cause, errors } = e as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string') codes.push(code);
    visit(cause, depth + 1);
    if (Array.isArray(errors)) for (const inner of errors) visit(inner, depth + 1);
  };
  visit(err, 0);
  return codes;
}

/** The names of an error and its causes (`AbortError`, `TimeoutError`, `SocketError`, …). */
function errorNames(err: unknown): string[] {
  const names: string[] = [];
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const name = (e as { name?: unknown }).name;
    if (typeof name === 'string') names.push(name);
  }
  return names;
}

const isTls = (code: string) =>
  code.startsWith('ERR_TLS_') ||
  code.startsWith('ERR_SSL_') ||
  code.includes('CERT') ||
  code.startsWith('UNABLE_TO_') ||
  code === 'EPROTO' ||
  code === 'HOSTNAME_MISMATCH';

function tlsText(code: string): string {
  if (code === 'DEPTH_ZERO_SELF_SIGNED_CERT' || code === 'SELF_SIGNED_CERT_IN_CHAIN') return 'TLS failed: the certificate is self-signed';
  if (code === 'CERT_HAS_EXPIRED') return 'TLS failed: the certificate has expired';
  if (code === 'CERT_NOT_YET_VALID') return 'TLS failed: the certificate is not valid yet';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH') return 'TLS failed: the certificate is for another host name';
  if (code.startsWith('UNABLE_TO_')) return 'TLS failed: the certificate is not signed by a trusted authority';
  if (code === 'EPROTO' || code.startsWith('ERR_SSL_')) return 'TLS failed: the server does not speak TLS there (plain http on an https URL?)';
  return 'TLS failed';
}

/** In order: the first rule a code of the error matches decides (ECONNREFUSED before a later timeout, …). */
const RULES: ReadonlyArray<{ cause: NetworkCause; matches(code: string): boolean; text(code: string): string }> = [
  { cause: 'refused', matches: (c) => c === 'ECONNREFUSED', text: () => 'connection refused' },
  {
    cause: 'dns',
    matches: (c) => DNS.has(c),
    text: (c) => (c === 'EAI_AGAIN' ? 'the name did not resolve (DNS did not answer in time)' : 'the name did not resolve'),
  },
  { cause: 'tls', matches: isTls, text: tlsText },
  {
    cause: 'timeout',
    matches: (c) => TIMEOUT.has(c),
    text: (c) => (c === 'UND_ERR_CONNECT_TIMEOUT' || c === 'ETIMEDOUT' ? 'connecting timed out' : 'timed out'),
  },
  { cause: 'unreachable', matches: (c) => UNREACHABLE.has(c), text: () => 'no route to the host' },
  { cause: 'closed', matches: (c) => CLOSED.has(c), text: () => 'the connection closed before the answer was complete' },
  { cause: 'protocol', matches: (c) => c.startsWith('HPE_'), text: () => 'the answer is not valid HTTP' },
];

/** What kind of network failure `err` is, with its code. */
export function classifyNetworkError(err: unknown): NetworkFailure {
  const codes = errorCodes(err);
  for (const rule of RULES) {
    const code = codes.find((c) => rule.matches(c));
    if (code) return { cause: rule.cause, code, text: rule.text(code) };
  }
  const names = errorNames(err);
  if (names.includes('TimeoutError') || names.includes('AbortError')) return { cause: 'timeout', text: 'timed out' };
  const message = err instanceof Error ? withoutUrls(err.message).split('\n')[0]!.slice(0, 200) : String(err).slice(0, 200);
  return { cause: 'other', ...(codes[0] ? { code: codes[0] } : {}), text: message || (err as Error)?.name || 'failed' };
}

/** `text (CODE)`, as messages say it. */
export function describeNetworkFailure(f: NetworkFailure): string {
  return f.code ? `${f.text} (${f.code})` : f.text;
}

/** An endpoint as messages may name it: scheme, host, port and path; never credentials, a query or a fragment. */
export function describeEndpoint(url: URL | string): string {
  try {
    const u = typeof url === 'string' ? new URL(url) : url;
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return 'the endpoint';
  }
}

/** Any URL in a message cut to its origin and path (an error's text may repeat the URL, query string and all). */
export function withoutUrls(text: string): string {
  return text.replace(/\b(https?|wss?):\/\/[^\s"'<>]+/gi, (m) => {
    const trail = /[).,;:]+$/.exec(m)?.[0] ?? '';
    return describeEndpoint(m.slice(0, m.length - trail.length)) + trail;
  });
}
