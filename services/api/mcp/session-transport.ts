/**
 * A 2025 session's transport, watched (server.ts): what the session is doing, and params the SDK would answer badly.
 */
import {
  type StandardSchemaV1,
  specTypeSchemas,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  ProtocolErrorCode,
  type JSONRPCRequest,
  type RequestId,
  type Transport,
} from '@modelcontextprotocol/server';
import { isJsonObject } from '../../../shared/core/json.js';

/**
 * Sits between a session's transport and its Server (call after `server.connect(transport)`):
 *  - malformed tools/call or tools/list params are answered -32602 in plain words before the SDK sees them (it
 *    would answer -32603, Internal error, with its parser's dump);
 *  - every other request is in flight (`begin()` until the `end` it returned is called) from its arrival until
 *    its answer is sent or the client cancels it: that, not an open HTTP stream, is what keeps a session busy.
 */
export function interpose(transport: Transport, begin: () => () => void): void {
  const deliver = transport.onmessage;
  const send = transport.send.bind(transport);
  const inFlight = new Map<RequestId, () => void>();
  const ended = (id: unknown): void => {
    inFlight.get(id as RequestId)?.();
    inFlight.delete(id as RequestId);
  };
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message)) {
      const problem = paramsProblem(message);
      if (problem !== undefined) {
        send({ jsonrpc: '2.0', id: message.id, error: { code: ProtocolErrorCode.InvalidParams, message: problem } }).catch(() => undefined);
        return;
      }
      ended(message.id);
      inFlight.set(message.id, begin());
    } else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
      ended(message.params?.requestId);
    }
    deliver?.(message, extra);
  };
  transport.send = (message, options) => {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) ended(message.id);
    return send(message, options);
  };
}

/** The SDK's own schemas of the requests whose params it would answer -32603 for (its parser's dump). */
const CHECKED: Record<string, StandardSchemaV1> = {
  initialize: specTypeSchemas.InitializeRequest,
  ping: specTypeSchemas.PingRequest,
  'tools/call': specTypeSchemas.CallToolRequest,
  'tools/list': specTypeSchemas.ListToolsRequest,
};

/** What is wrong with the params of a request the SDK would answer badly, in plain words; undefined when nothing is. */
function paramsProblem(request: JSONRPCRequest): string | undefined {
  const schema = Object.hasOwn(CHECKED, request.method) ? CHECKED[request.method] : undefined;
  const checked = schema?.['~standard'].validate(request);
  // The SDK's schemas are synchronous (no async refinements).
  if (!checked || checked instanceof Promise || !checked.issues) return undefined;
  const params: unknown = request.params;
  if (request.method === 'tools/call') {
    const example = '{"name": "<a tool from tools/list>", "arguments": {…}}';
    if (!isJsonObject(params)) return `tools/call needs params: ${example}`;
    if (typeof params.name !== 'string') return `tools/call needs params.name, the name of a tool from tools/list: ${example}`;
    if (params.arguments !== undefined && !isJsonObject(params.arguments)) return "params.arguments must be an object: the tool's arguments by name";
  }
  const issue = checked.issues[0];
  const path = (issue?.path ?? []).map((p: PropertyKey | { key: PropertyKey }) => String(typeof p === 'object' ? p.key : p));
  const where = path.length ? ` at ${path.join('.')}` : '';
  return `the params of ${request.method} are malformed${where}${issue ? `: ${issue.message}` : ''}`;
}
