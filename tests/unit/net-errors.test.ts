/**
 * Network failures in plain words (shared/platform/net-errors.ts), the webhook runtime's answer for each
 * (shared/runtimes/remote.ts networkFailure) and a webhook attempt's error in the delivery log
 * (shared/webhooks/attempt-error.ts): Node's and undici's error shapes, the endpoint named without credentials or a
 * query string.
 */
import net from 'node:net';
import { describe, expect, test } from 'vitest';
import { postWebhook } from '../../services/settler/callbacks.js';
import { classifyNetworkError, describeEndpoint, withoutUrls } from '../../shared/platform/net-errors.js';
import { networkFailure } from '../../shared/runtimes/remote.js';
import { attemptError } from '../../shared/webhooks/attempt-error.js';

const coded = (code: string, message = code) => Object.assign(new Error(message), { code });
/** undici's shape: `fetch failed` / a SocketError, the system error in `cause`. */
const wrapped = (code: string) => Object.assign(new TypeError('fetch failed'), { cause: coded(code, `connect ${code} 10.0.0.1:443`) });

describe('classifyNetworkError', () => {
  test.each([
    ['ECONNREFUSED', 'refused', 'connection refused'],
    ['ENOTFOUND', 'dns', 'the name did not resolve'],
    ['EAI_AGAIN', 'dns', 'the name did not resolve (DNS did not answer in time)'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'tls', 'TLS failed: the certificate is self-signed'],
    ['CERT_HAS_EXPIRED', 'tls', 'TLS failed: the certificate has expired'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls', 'TLS failed: the certificate is for another host name'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'tls', 'TLS failed: the certificate is not signed by a trusted authority'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'tls', 'TLS failed: the server does not speak TLS there (plain http on an https URL?)'],
    ['UND_ERR_CONNECT_TIMEOUT', 'timeout', 'connecting timed out'],
    ['ETIMEDOUT', 'timeout', 'connecting timed out'],
    ['EHOSTUNREACH', 'unreachable', 'no route to the host'],
    ['ECONNRESET', 'closed', 'the connection closed before the answer was complete'],
    ['UND_ERR_SOCKET', 'closed', 'the connection closed before the answer was complete'],
    ['HPE_INVALID_CONSTANT', 'protocol', 'the answer is not valid HTTP'],
  ])('%s → %s', (code, cause, text) => {
    expect(classifyNetworkError(coded(code))).toEqual({ cause, code, text });
    expect(classifyNetworkError(wrapped(code))).toEqual({ cause, code, text });
  });

  test('looks inside aggregated errors (a name with several addresses), and reads AbortError and TimeoutError', () => {
    const both = Object.assign(new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], ''), { code: undefined });
    expect(classifyNetworkError(both)).toMatchObject({ cause: 'refused', code: 'ECONNREFUSED' });
    expect(classifyNetworkError(new DOMException('The operation timed out.', 'TimeoutError'))).toEqual({ cause: 'timeout', text: 'timed out' });
    expect(classifyNetworkError(Object.assign(new Error('aborted'), { name: 'AbortError' }))).toEqual({ cause: 'timeout', text: 'timed out' });
  });

  test('an unknown error keeps its first line, its URLs cut to origin and path', () => {
    const r = classifyNetworkError(new Error('bad thing at https://user:pw@x.example/a?token=sekrit\nstack…'));
    expect(r).toEqual({ cause: 'other', text: 'bad thing at https://x.example/a' });
  });
});

describe('describeEndpoint', () => {
  test('scheme, host, port and path: never credentials, a query or a fragment', () => {
    expect(describeEndpoint('https://user:secret@agent.example:8443/mcp?key=sekrit#frag')).toBe('https://agent.example:8443/mcp');
    expect(describeEndpoint(new URL('http://127.0.0.1:7474/'))).toBe('http://127.0.0.1:7474');
    expect(withoutUrls('see http://a.example/x?y=1, then')).toBe('see http://a.example/x, then');
  });
});

describe('networkFailure (the remote runtimes)', () => {
  const endpoint = new URL('https://user:pw@agent.example/hook?token=sekrit');

  test('unreachable, refused, not resolved, TLS, connect timeout: runtime_unavailable, naming the endpoint', () => {
    expect(networkFailure(wrapped('ECONNREFUSED'), 1000, endpoint)).toEqual({
      kind: 'failure',
      code: 'runtime_unavailable',
      message: 'could not reach https://agent.example/hook: connection refused (ECONNREFUSED)',
    });
    expect(networkFailure(coded('CERT_HAS_EXPIRED'), 1000, endpoint)).toMatchObject({
      code: 'runtime_unavailable',
      message: 'could not reach https://agent.example/hook: TLS failed: the certificate has expired (CERT_HAS_EXPIRED)',
    });
    expect(networkFailure(coded('UND_ERR_CONNECT_TIMEOUT'), 1000, endpoint)).toMatchObject({ code: 'runtime_unavailable' });
    expect(networkFailure(coded('ENOTFOUND'), 1000)).toMatchObject({ message: 'could not reach the endpoint: the name did not resolve (ENOTFOUND)' });
  });

  test('closed mid-answer, or not HTTP: agent_error (the endpoint was reached); undici timers: timeout', () => {
    expect(networkFailure(coded('ECONNRESET'), 1000, endpoint)).toEqual({
      kind: 'failure',
      code: 'agent_error',
      message: 'https://agent.example/hook closed the connection before answering: the connection closed before the answer was complete (ECONNRESET)',
    });
    expect(networkFailure(coded('HPE_INVALID_CONSTANT'), 1000, endpoint)).toMatchObject({ code: 'agent_error' });
    expect(networkFailure(coded('UND_ERR_HEADERS_TIMEOUT'), 1000, endpoint)).toMatchObject({ code: 'timeout' });
  });
});

describe('attemptError (a webhook attempt in the delivery log)', () => {
  const url = 'https://hooks.example/services/T000/B000/sekrit?token=sekrit';

  test('names the receiver by host and port only, and what happened', () => {
    expect(attemptError(wrapped('ECONNREFUSED'), url)).toBe('the receiver hooks.example:443: connection refused (ECONNREFUSED)');
    expect(attemptError(coded('ENOTFOUND'), 'http://nowhere.invalid/x')).toBe('the receiver nowhere.invalid:80: the name did not resolve (ENOTFOUND)');
    expect(attemptError(coded('DEPTH_ZERO_SELF_SIGNED_CERT'), url)).toBe(
      'the receiver hooks.example:443: TLS failed: the certificate is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT)',
    );
    expect(attemptError(coded('ECONNRESET'), url)).toBe('the receiver hooks.example:443: the connection closed before the answer was complete (ECONNRESET)');
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'CERT_HAS_EXPIRED']) expect(attemptError(coded(code), url)).not.toContain('sekrit');
  });

  test('is what postWebhook records for a receiver that refuses the connection', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const r = await postWebhook(`http://127.0.0.1:${port}/hook?token=sekrit`, '{}', {}, { timeoutMs: 5_000, now: Date.now });
    expect('error' in r && r.error).toBe(`the receiver 127.0.0.1:${port}: connection refused (ECONNREFUSED)`);
  });

  test("the attempt's own timeout keeps its wording", () => {
    expect(attemptError(new DOMException('The operation timed out.', 'TimeoutError'), url)).toBe('no answer within the attempt timeout');
  });

  test('a receiver that accepts and never answers: cut at the first-byte timeout, long before the attempt’s own', async () => {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((s) => void sockets.add(s.on('data', () => {})));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const r = await postWebhook(`http://127.0.0.1:${port}/hook`, '{}', {}, { timeoutMs: 5_000, firstByteTimeoutMs: 200, now: Date.now });
      expect('error' in r && r.error).toBe('no answer within the first-byte timeout');
      expect(sockets.size).toBe(1);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
