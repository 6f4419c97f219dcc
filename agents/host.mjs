// The reference MCP host (gateway.md §6, "the Holon MCP agent profile"): serves every agents/*/tool.mjs
// as one tool of one Streamable HTTP endpoint, /mcp, on the MCP SDK v2, in both protocol eras: 2025 clients get
// stateful sessions, 2026-07-28 clients stateless requests (server/discover, the per-request envelope). See
// agents/README.md.
//
//   node agents/host.mjs [--port 7474] [--host 127.0.0.1]     (the port's default: HOLON_AGENT_HOST_PORT, else 7474)
//
// Nothing about a call's input or output is ever logged.
import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { NodeStreamableHTTPServerTransport, toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  specTypeSchemas,
} from '@modelcontextprotocol/server';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parseDocument } from 'yaml';
import { isToolError } from './tool-kit.mjs';

export const AGENTS_DIR = dirname(fileURLToPath(import.meta.url));
/** Largest request body accepted on /mcp. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
const MAX_SESSIONS = 1000;
/** A session with no open request and no activity for this long is closed. */
const IDLE_MS = 30 * 60_000;
const SERVER_INFO = { name: 'holon-agent-host', version: '1.0.0' };
const AMOUNT = /^(0|[1-9][0-9]*)(\.[0-9]{1,6})?$/;
const CURRENCY = /^[A-Z]{3}$/;
const UNEXPECTED = 'the tool failed unexpectedly';

const addFormats = addFormatsModule.default ?? addFormatsModule;

/**
 * Start the host. `port: 0` picks a free port. `env` is what tools see as `ctx.env` (API keys, base URLs).
 * `log(level, message, fields?)` receives 'debug' | 'info' | 'warn' | 'error' lines (default: warn and
 * error to stderr). `allowedOrigins`: browser origins allowed to call /mcp besides pages of this machine
 * (http://localhost:*, 127.0.0.1, [::1]); any other request carrying an Origin header is refused
 * (DNS-rebinding guard; the gateway sends none).
 */
export async function startAgentHost({ port = 7474, host = '127.0.0.1', dir = AGENTS_DIR, env = process.env, log = defaultLog, allowedOrigins = [] } = {}) {
  const tools = await loadTools(dir, log);
  const listed = [...tools.values()].map((t) => t.listing);
  const sessions = new Map(); // mcp-session-id → { transport, open, lastActive }

  const callTool = async (request, context) => {
    const { name, arguments: args = {}, _meta: meta } = request.params;
    const extra = { signal: context.mcpReq.signal };
    const tool = tools.get(name);
    // A JSON-RPC error whose message is exactly these words.
    if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    if (!tool.validate(args)) {
      return { isError: true, content: [{ type: 'text', text: `invalid arguments: ${describeAjvErrors(tool.validate.errors)}` }] };
    }
    const ctx = { signal: extra.signal, maxCost: readMaxCost(meta?.['holon/max_cost']), env };
    let returned;
    try {
      returned = await tool.run(args, ctx);
    } catch (error) {
      if (isToolError(error)) return declaredError(tool, error, log);
      // After a cancellation nothing is sent back (the SDK drops the answer); otherwise a crash is not a
      // declared error: no code, so the gateway treats it as agent_error, never billed.
      if (!extra.signal.aborted) log('error', `tool ${name} failed unexpectedly`, { tool: name, error: error?.name ?? typeof error });
      return { isError: true, content: [{ type: 'text', text: UNEXPECTED }] };
    }
    return success(tool, returned, log);
  };

  /** One server of the tools: per 2025 session, or per 2026-07-28 request. */
  const buildServer = () => {
    const server = new Server(SERVER_INFO, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', async () => ({ tools: listed }));
    server.setRequestHandler('tools/call', callTool);
    return server;
  };
  // 2026-07-28: stateless, one server per request; 2025 requests never reach it (they go to sessions).
  const modern = createMcpHandler(buildServer, { legacy: 'reject', maxRequestBodySize: MAX_BODY_BYTES, onerror: (e) => log('debug', `mcp: ${e.message}`) });
  const modernNode = toNodeHandler(modern);

  const newSession = async () => {
    const server = buildServer();
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: MAX_BODY_BYTES,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, open: 0, lastActive: Date.now() });
        log('debug', 'session opened', { session: id });
      },
    });
    // Set before connect: the server chains its own close handler after this one.
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id && sessions.delete(id)) log('debug', 'session closed', { session: id });
    };
    transport.onerror = (error) => log('debug', `transport: ${error.message}`);
    await server.connect(transport);
    answerMalformedCalls(transport);
    return transport;
  };

  const handleMcp = async (req, res) => {
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.includes(origin) && !isLoopbackOrigin(origin)) {
      return sendJsonRpcError(res, 403, -32000, 'Forbidden: this origin may not call the agent host');
    }
    const sessionId = header(req, 'mcp-session-id');
    if (req.method === 'POST') {
      const body = await readBody(req, MAX_BODY_BYTES);
      if (body.tooLarge) {
        res.on('finish', () => req.destroy());
        return sendJsonRpcError(res, 413, -32000, `Payload Too Large: a request body may be at most ${MAX_BODY_BYTES} bytes`, { connection: 'close' });
      }
      let message;
      try {
        message = JSON.parse(body.text);
      } catch {
        return sendJsonRpcError(res, 400, -32700, 'Parse error: Invalid JSON');
      }
      if (sessionId === undefined && !(await isLegacyRequest(await toWebRequest(req, message), message))) {
        return modernNode(req, res, message);
      }
      if (sessionId !== undefined) {
        const session = sessions.get(sessionId);
        if (!session) return sendJsonRpcError(res, 404, -32001, 'Session not found');
        track(session, res);
        return session.transport.handleRequest(req, res, message);
      }
      if (!isInitializeRequest(message)) {
        return sendJsonRpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
      }
      if (sessions.size >= MAX_SESSIONS) return sendJsonRpcError(res, 503, -32000, 'Too many open sessions');
      const transport = await newSession();
      return transport.handleRequest(req, res, message);
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      // GET opens the session's stream of server messages; DELETE ends the session.
      if (sessionId === undefined) return sendJsonRpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      const session = sessions.get(sessionId);
      if (!session) return sendJsonRpcError(res, 404, -32001, 'Session not found');
      track(session, res);
      return session.transport.handleRequest(req, res);
    }
    return sendJsonRpcError(res, 405, -32000, 'Method not allowed.', { allow: 'GET, POST, DELETE' });
  };

  const httpServer = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    let handled;
    if (path === '/healthz') {
      handled =
        req.method === 'GET' || req.method === 'HEAD'
          ? sendJson(res, 200, { status: 'ok', tools: tools.size })
          : sendJson(res, 405, { error: 'method not allowed' }, { allow: 'GET, HEAD' });
    } else if (path === '/mcp') {
      handled = handleMcp(req, res);
    } else {
      handled = sendJson(res, 404, { error: 'not found' });
    }
    Promise.resolve(handled).catch((error) => {
      log('error', `request failed: ${error?.message ?? error}`);
      if (!res.headersSent) sendJsonRpcError(res, 500, -32603, 'Internal server error');
      else res.destroy();
    });
  });

  await new Promise((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(port, host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const bound = httpServer.address().port;
  const url = `http://${urlHost(host)}:${bound}/mcp`;

  const reaper = setInterval(() => {
    const cutoff = Date.now() - IDLE_MS;
    for (const session of sessions.values()) {
      if (session.open === 0 && session.lastActive < cutoff) session.transport.close().catch(() => {});
    }
  }, 60_000);
  reaper.unref();

  log('info', `agent host listening on ${url}`, { tools: [...tools.keys()] });

  let closing;
  return {
    url,
    port: bound,
    tools: [...tools.keys()],
    close() {
      closing ??= (async () => {
        clearInterval(reaper);
        await modern.close().catch(() => {});
        const stopped = new Promise((resolve) => httpServer.close(() => resolve()));
        await Promise.allSettled([...sessions.values()].map((s) => s.transport.close()));
        sessions.clear();
        httpServer.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}

// ---------------------------------------------------------------------------------------------- tools

/** Every `<dir>/*` holding both holon.yaml and tool.mjs, keyed by `runtime.tool`. */
async function loadTools(dir, log) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  const entries = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules')
    .map((e) => e.name)
    .sort();
  const tools = new Map();
  for (const name of entries) {
    const manifestFile = join(dir, name, 'holon.yaml');
    const toolFile = join(dir, name, 'tool.mjs');
    if (!(await isFile(manifestFile)) || !(await isFile(toolFile))) continue;
    const skip = (why) => log('warn', `skipped ${join(dir, name)}: ${why}`);

    let manifest;
    try {
      manifest = readManifest(await readFile(manifestFile, 'utf8'));
    } catch (e) {
      skip(e.message);
      continue;
    }
    const { id, version, summary, runtime, interface: iface } = manifest;
    if (runtime?.kind !== 'mcp' || typeof runtime.tool !== 'string' || runtime.tool === '') {
      skip('holon.yaml must have runtime.kind "mcp" and a runtime.tool');
      continue;
    }
    if (!isRecord(iface?.input) || iface.input.type !== 'object') {
      skip('interface.input must be a JSON Schema of type "object" (MCP tool arguments are an object)');
      continue;
    }
    if (tools.has(runtime.tool)) throw new Error(`two agents in ${dir} declare the tool "${runtime.tool}"`);
    let validate;
    try {
      validate = ajv.compile(iface.input);
    } catch (e) {
      skip(`interface.input is not a usable JSON Schema: ${e.message}`);
      continue;
    }
    let run;
    try {
      run = (await import(pathToFileURL(toolFile).href)).default;
    } catch (e) {
      skip(`tool.mjs could not be loaded: ${e.message}`);
      continue;
    }
    if (typeof run !== 'function') {
      skip('tool.mjs must export a default function run(input, ctx)');
      continue;
    }
    const errors = isRecord(iface.errors) ? iface.errors : {};
    tools.set(runtime.tool, {
      name: runtime.tool,
      agent: `${id}@${version}`,
      declared: new Set(Object.keys(errors)),
      validate,
      run,
      listing: {
        name: runtime.tool,
        description: typeof summary === 'string' ? summary : undefined,
        inputSchema: iface.input,
        // No outputSchema: the SDK client validates every structuredContent against it, declared errors
        // included (their {error} shape would fail). The manifest's output schema travels in _meta.
        _meta: { 'holon/agent': `${id}@${version}`, ...(isRecord(iface.output) ? { 'holon/output_schema': iface.output } : {}) },
      },
    });
  }
  return tools;
}

/** holon.yaml read the way shared/core/documents.ts reads it: YAML core schema, no merge keys, bounded aliases. */
function readManifest(text) {
  const doc = parseDocument(text, { schema: 'core', merge: false, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length) throw new Error(`holon.yaml is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`);
  const value = doc.toJS({ maxAliasCount: 100 });
  if (!isRecord(value)) throw new Error('holon.yaml is not a mapping');
  return value;
}

// --------------------------------------------------------------------------------------------- results

/** `{output, units?, quote?}` → the profile's result: structuredContent + a JSON text block + _meta. */
function success(tool, returned, log) {
  const fail = (why) => {
    log('error', `tool ${tool.name} ${why}`, { tool: tool.name });
    return { isError: true, content: [{ type: 'text', text: UNEXPECTED }] };
  };
  if (!isRecord(returned) || !Object.hasOwn(returned, 'output')) return fail('returned something other than {output, units?, quote?}');
  const meta = billingMeta(returned);
  if (meta === null) return fail('returned units that are not a non-negative integer or a quote that is not a decimal string');
  let text;
  try {
    text = JSON.stringify(returned.output);
  } catch {
    text = undefined;
  }
  if (text === undefined) return fail('returned an output that is not JSON');
  const output = JSON.parse(text); // exactly what the text block says (drops undefined fields, toJSON, …)
  return {
    content: [{ type: 'text', text }],
    // structuredContent is a JSON object in MCP; any other output travels in the text block only.
    ...(isRecord(output) ? { structuredContent: output } : {}),
    ...(meta ? { _meta: meta } : {}),
  };
}

/** toolError(code, message, {units?, quote?}) → isError + structuredContent.error. */
function declaredError(tool, error, log) {
  if (!tool.declared.has(error.code)) {
    log('warn', `tool ${tool.name} returned the undeclared error code ${error.code} (never billed)`, { tool: tool.name });
  }
  const body = { error: { code: error.code, message: String(error.message ?? error.code) } };
  const meta = billingMeta(error);
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body,
    ...(meta ? { _meta: meta } : {}),
  };
}

/** `_meta` for units / quote; undefined when neither is set, null when one is malformed. */
function billingMeta({ units, quote }) {
  const meta = {};
  if (units !== undefined) {
    if (!Number.isSafeInteger(units) || units < 0) return null;
    meta['holon/units'] = units;
  }
  if (quote !== undefined) {
    if (typeof quote !== 'string' || !AMOUNT.test(quote)) return null;
    meta['holon/quote'] = quote;
  }
  return Object.keys(meta).length ? meta : undefined;
}

/** `_meta["holon/max_cost"]` → `{amount, currency}`, or undefined when absent or malformed. */
function readMaxCost(value) {
  if (!isRecord(value)) return undefined;
  const { amount, currency } = value;
  if (typeof amount !== 'string' || !AMOUNT.test(amount) || typeof currency !== 'string' || !CURRENCY.test(currency)) {
    return undefined;
  }
  return { amount, currency };
}

function describeAjvErrors(errors) {
  return (errors ?? [])
    .slice(0, 10)
    .map((e) => `${e.instancePath || '(root)'} ${e.message}`)
    .join('; ');
}

// ------------------------------------------------------------------------------------------------ http

/**
 * The SDK answers a tools/call whose params are not {name, arguments?} with -32603 (Internal error) and its
 * parser's dump; the client's mistake is -32602 (Invalid params), said in words, before the SDK sees it.
 */
function answerMalformedCalls(transport) {
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const wrong = message.method === 'tools/call' && message.id !== undefined ? wrongCallParams(message.params) : undefined;
    if (wrong === undefined) return deliver?.(message, extra);
    transport.send({ jsonrpc: '2.0', id: message.id, error: { code: ProtocolErrorCode.InvalidParams, message: wrong } }).catch(() => {});
  };
}

function wrongCallParams(params) {
  if (!isRecord(params) || typeof params.name !== 'string') return 'tools/call takes params {"name": <a tool of tools/list>, "arguments": {...}}';
  if (params.arguments !== undefined && !isRecord(params.arguments)) return 'the arguments of tools/call must be an object';
  const checked = specTypeSchemas.CallToolRequest['~standard'].validate({ method: 'tools/call', params });
  if (checked.issues) return 'the params of tools/call do not follow the MCP schema';
  return undefined;
}

/** A page served from this machine (http://localhost:*, 127.0.0.1, [::1]); a DNS-rebinding page never is. */
function isLoopbackOrigin(origin) {
  try {
    const { protocol, hostname } = new URL(origin);
    return (protocol === 'http:' || protocol === 'https:') && ['localhost', '127.0.0.1', '[::1]'].includes(hostname);
  } catch {
    return false;
  }
}

function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    if (Number(req.headers['content-length']) > limit) return resolve({ tooLarge: true });
    const chunks = [];
    let size = 0;
    let settled = false;
    req.on('data', (chunk) => {
      if (settled) return;
      size += chunk.length;
      if (size > limit) {
        settled = true;
        chunks.length = 0;
        resolve({ tooLarge: true });
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve({ text: Buffer.concat(chunks).toString('utf8') });
    });
    req.on('error', (error) => {
      if (settled) return;
      settled = true;
      reject(error);
    });
  });
}

/** Count open responses, so that a long call or a listening stream does not make a session idle. */
function track(session, res) {
  session.open += 1;
  session.lastActive = Date.now();
  res.on('close', () => {
    session.open -= 1;
    session.lastActive = Date.now();
  });
}

function sendJson(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function sendJsonRpcError(res, status, code, message, headers = {}) {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers);
}

function header(req, name) {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function urlHost(host) {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function isRecord(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function isFile(path) {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function defaultLog(level, message) {
  if (level === 'warn' || level === 'error') process.stderr.write(`agent-host ${level}: ${message}\n`);
}

// ------------------------------------------------------------------------------------------------- cli

function isMain() {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  let options;
  try {
    options = parseArgs({ options: { port: { type: 'string' }, host: { type: 'string' } } }).values;
  } catch (e) {
    process.stderr.write(`${e.message}\nusage: node agents/host.mjs [--port N] [--host ADDRESS]\n`);
    process.exit(2);
  }
  // The gateway calls the shipped agents on HOLON_AGENT_HOST_PORT (docs/mcp.md): the same setting moves the host.
  const fromEnv = process.env.HOLON_AGENT_HOST_PORT?.trim() || undefined;
  const port = Number(options.port ?? fromEnv ?? 7474);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`${options.port === undefined ? 'HOLON_AGENT_HOST_PORT' : '--port'} must be an integer from 0 to 65535\n`);
    process.exit(2);
  }
  const cliLog = (level, message) => {
    if (level !== 'debug') process.stderr.write(`agent-host ${level}: ${message}\n`);
  };
  const running = await startAgentHost({ port, host: options.host ?? '127.0.0.1', log: cliLog }).catch((e) => {
    process.stderr.write(`agent-host error: cannot start: ${e.code ?? e.message}\n`);
    process.exit(1);
  });
  process.stdout.write(`${running.url}\n`);
  cliLog('info', `tools: ${running.tools.join(', ') || '(none)'}`);
  const stop = async (signal) => {
    cliLog('info', `${signal}: stopping`);
    setTimeout(() => process.exit(1), 5000).unref();
    await running.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}
