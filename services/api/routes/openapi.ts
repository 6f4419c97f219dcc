/**
 * GET /v0/openapi.json (no key): the OpenAPI 3.1 document of this gateway's REST routes, built from the route table
 * (services/api/openapi/) once per server URL. A dev gateway leaves out the hosted-only routes and the keys. Its one
 * server is HOLON_PUBLIC_URL when set, else the address the gateway listens on, as the request reached it (the
 * socket's own address, never the Host header a client wrote). Public and read-only, so any page may read it
 * (Access-Control-Allow-Origin: *, no credentials).
 */
import type { Socket } from 'node:net';
import { Router } from 'express';
import { buildOpenApiDocument } from '../openapi/document.js';
import { metaOperations, ROUTE_OPERATIONS } from '../openapi/index.js';
import { mount } from '../openapi/operations.js';

/** `http://127.0.0.1:8080`: the listening address the request came in on (IPv4-mapped IPv6 written as IPv4). */
function listeningUrl(socket: Socket, secure: boolean): string {
  const address = (socket.localAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  const host = address.includes(':') ? `[${address}]` : address;
  return `${secure ? 'https' : 'http'}://${host}:${socket.localPort}`;
}

export function openApiRoutes(options: { hosted: boolean; publicUrl?: string }): Router {
  const router = Router();
  // One body per server URL: the public URL, or the few addresses this process listens on.
  const bodies = new Map<string, string>();
  const bodyFor = (serverUrl: string) => {
    let body = bodies.get(serverUrl);
    if (body === undefined) {
      body = JSON.stringify(buildOpenApiDocument(ROUTE_OPERATIONS, { hosted: options.hosted, serverUrl }));
      bodies.set(serverUrl, body);
    }
    return body;
  };
  mount(router, metaOperations.openapi, (req, res) => {
    const serverUrl = options.publicUrl ?? listeningUrl(req.socket, 'encrypted' in req.socket);
    res.set({ 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' }).type('application/json').send(bodyFor(serverUrl));
  });
  return router;
}
