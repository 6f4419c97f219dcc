/** The API's HTTP server: where it listens, how long a client may take, how large a request may be, how long a caller waits. */
import { inSection, setting } from './declare.js';

export const SERVER = inSection('gateway', {
  port: setting.int({ env: 'PORT', default: 8080, min: 0, max: 65535, doc: "the API's port (`--port`); 0 = any free port", roles: ['api'] }),
  /** Loopback in dev mode, where nothing asks for a key; every interface in hosted and production mode (parse.ts fills it). */
  host: setting.string({
    env: 'HOST',
    default: '',
    shown: '`127.0.0.1`; hosted or production `0.0.0.0`',
    doc: 'the address the API listens on (`--host`)',
    roles: ['api'],
  }),
  syncWaitS: setting.int({
    env: 'HOLON_SYNC_WAIT_S',
    default: 60,
    min: 1,
    max: 600,
    doc: 'how long a synchronous `POST /v0/calls` waits before answering 202',
    roles: ['api'],
  }),
  headersTimeoutS: setting.int({
    env: 'HOLON_HEADERS_TIMEOUT_S',
    default: 20,
    min: 1,
    max: 600,
    doc: "the longest a client may take to send a request's headers; past it the API answers 408 and closes the connection (a slow client cannot hold sockets)",
    roles: ['api'],
  }),
  requestTimeoutS: setting.int({
    env: 'HOLON_REQUEST_TIMEOUT_S',
    default: 120,
    min: 1,
    max: 3600,
    doc: 'the longest a client may take to send a whole request, body included (an upload); waiting for the answer does not count',
    roles: ['api'],
  }),
  keepAliveTimeoutS: setting.int({
    env: 'HOLON_KEEPALIVE_TIMEOUT_S',
    default: 5,
    min: 1,
    max: 600,
    doc: "how long an idle keep-alive connection stays open. Behind a proxy that keeps connections to the API (ingress-nginx's `upstream-keepalive-timeout`, 60 s), set it above the proxy's",
    roles: ['api'],
  }),
  bodyLimitBytes: setting.int({
    env: 'HOLON_BODY_LIMIT',
    default: 1_048_576,
    min: 1024,
    max: 100 * 1_048_576,
    unit: 'bytes',
    doc: 'the largest JSON request body, bytes',
    roles: ['api'],
  }),
  mcpMandate: setting.string({
    env: 'HOLON_MCP_MANDATE',
    default: 'demo/sandbox',
    doc: 'dev mode: the mandate of an MCP connection to `/mcp` (and of an A2A request) that names none',
    roles: ['api'],
  }),
  mcpProgressMs: setting.int({
    env: 'HOLON_MCP_PROGRESS_MS',
    default: 2000,
    min: 50,
    max: 60_000,
    doc: "how often `/mcp`'s `call_agent` reports progress",
    roles: ['api'],
  }),
});
