/**
 * Protocol errors of /mcp: JSON-RPC error objects in plain words (spec/mcp.md; MCP "Error handling"). A tool that
 * ran and failed is a tool result with `isError`; what is wrong with the request itself (an unknown tool,
 * malformed params, no session, a refused connection) is a JSON-RPC error.
 */
import type { Response } from 'express';
import { ProtocolError, type ProtocolErrorCode } from '@modelcontextprotocol/server';

/** JSON-RPC's range for implementation-defined server errors starts here: a refusal that is not about the params. */
export const SERVER_ERROR = -32000;
/** What the SDK's transport answers for a session it does not know; clients take it as "initialize again". */
export const SESSION_NOT_FOUND = -32001;

/** A JSON-RPC 2.0 error response. */
export type JsonRpcErrorBody = { jsonrpc: '2.0'; error: { code: number; message: string; data?: unknown }; id: string | number | null };

/** A JSON-RPC error object (`id`: the request's when it has a usable one, else null). */
export function jsonRpcErrorBody(code: number, message: string, id?: unknown, data?: unknown): JsonRpcErrorBody {
  const usable = typeof id === 'string' || typeof id === 'number' ? id : null;
  return { jsonrpc: '2.0', error: { code, message, ...(data === undefined ? {} : { data }) }, id: usable };
}

/** Answer a JSON-RPC error outside a session's transport (`id`: the request's, when it has one). */
export function sendJsonRpcError(
  res: Response,
  status: number,
  message: string,
  options: { code?: number; id?: unknown; headers?: Record<string, string> } = {},
): void {
  if (options.headers) res.set(options.headers);
  res.status(status).json(jsonRpcErrorBody(options.code ?? SERVER_ERROR, message, options.id));
}

/** An error a request handler throws to answer with this JSON-RPC `code` and exactly this `message`. */
export function protocolError(code: ProtocolErrorCode, message: string): ProtocolError {
  return new ProtocolError(code, message);
}
