/**
 * Where a hosted gateway's MCP server and its authorization server are (docs/mcp.md, "Signing in from an MCP
 * client"): the issuer is HOLON_PUBLIC_URL (production requires it), else the request's own origin (tests, a local
 * trial); `/mcp` is the protected resource, described at `/.well-known/oauth-protected-resource/mcp` (RFC 9728 §3.1:
 * the resource's path after the well-known suffix). A 401 on /mcp names that document in `WWW-Authenticate`
 * (`resource_metadata`, RFC 9728 §5.1): `mcpResourceMetadata` puts its URL on the response before the key is read,
 * for principal.ts and the MCP server (mcp/server.ts) to say.
 */
import type { Request, RequestHandler, Response } from 'express';

const MCP_PATH = '/mcp';
export const RESOURCE_METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_PATH}`;

/** The authorization server's issuer identifier (RFC 8414 §2): an https URL without a trailing slash in production. */
export function issuerOf(req: Request, publicUrl: string | undefined): string {
  return (publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`).replace(/\/+$/, '');
}

/** The canonical URI of the gateway's MCP server (RFC 8707 §2; the MCP spec's "Canonical Server URI"). */
export const mcpResource = (issuer: string): string => `${issuer}${MCP_PATH}`;

/** Hosted: requests to /mcp carry the URL of the protected resource metadata, for the challenge of a 401. */
export function mcpResourceMetadata(publicUrl: string | undefined): RequestHandler {
  return (req, res, next) => {
    const path = req.path.toLowerCase();
    if (path === MCP_PATH || path === `${MCP_PATH}/`) res.locals.resourceMetadata = `${issuerOf(req, publicUrl)}${RESOURCE_METADATA_PATH}`;
    next();
  };
}

/** The protected resource metadata URL a 401 names, on /mcp of a hosted gateway; undefined elsewhere. */
export function resourceMetadataOf(res: Response): string | undefined {
  const url = res.locals.resourceMetadata;
  return typeof url === 'string' ? url : undefined;
}

/** `uri` with these parameters added to its query (what it has kept; RFC 6749 §3.1.2), those without a value left out. */
export function withParams(uri: string, params: Readonly<Record<string, string | null | undefined>>): string {
  const u = new URL(uri);
  for (const [name, value] of Object.entries(params)) if (value !== null && value !== undefined) u.searchParams.set(name, value);
  return u.href;
}
