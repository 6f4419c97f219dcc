/**
 * The exact answers of the authorization server an MCP client signs in with (routes/oauth.ts) and of the console's
 * consent routes (routes/mcp-consent.ts). The metadata documents and the token endpoint's answers are OAuth's own
 * shapes (RFC 9728, RFC 8414, RFC 6749 §5), listed field by field as the gateway writes them.
 */
import type { JsonSchema } from './operations.js';
import { closed, exact, text, TIMESTAMP } from './schemas.js';

const URL_STRING: JsonSchema = { type: 'string', format: 'uri' };
const STRINGS: JsonSchema = { type: 'array', items: { type: 'string' } };

/** An OAuth error (RFC 6749 §4.1.2.1, §5.2; RFC 8707 §2). */
export const OAUTH_ERROR: JsonSchema = exact(
  'An OAuth error: its code and what is wrong, in words',
  {
    error: {
      enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'invalid_target', 'unsupported_grant_type', 'unsupported_response_type'],
    },
    error_description: { type: 'string' },
  },
  ['error', 'error_description'],
);

/** GET /.well-known/oauth-protected-resource/mcp (RFC 9728 §2). */
export const PROTECTED_RESOURCE_METADATA: JsonSchema = closed('The protected resource metadata of /mcp', {
  resource: { ...URL_STRING, description: 'The canonical URI of the MCP server: `<issuer>/mcp`' },
  authorization_servers: { type: 'array', items: URL_STRING, minItems: 1, maxItems: 1, description: 'This gateway’s own issuer' },
  bearer_methods_supported: { const: ['header'] },
  resource_name: { type: 'string' },
});

/** GET /.well-known/oauth-authorization-server (RFC 8414 §2; RFC 9207 §2.3; client ID metadata documents). */
export const AUTHORIZATION_SERVER_METADATA: JsonSchema = closed('The authorization server metadata', {
  issuer: { ...URL_STRING, description: 'HOLON_PUBLIC_URL, else the gateway’s own origin as the request reached it' },
  authorization_endpoint: URL_STRING,
  token_endpoint: URL_STRING,
  response_types_supported: { ...STRINGS, const: ['code'] },
  response_modes_supported: { ...STRINGS, const: ['query'] },
  grant_types_supported: { ...STRINGS, const: ['authorization_code'] },
  code_challenge_methods_supported: { ...STRINGS, const: ['S256'] },
  token_endpoint_auth_methods_supported: { ...STRINGS, const: ['none'] },
  client_id_metadata_document_supported: { const: true },
  authorization_response_iss_parameter_supported: { const: true },
});

/** POST /oauth/token's form (RFC 6749 §4.1.3, RFC 7636 §4.5, RFC 8707 §2.2). */
export const TOKEN_BODY: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['grant_type', 'code', 'code_verifier', 'client_id', 'redirect_uri'],
  properties: {
    grant_type: { const: 'authorization_code' },
    code: text(200, 'The code from the authorization response'),
    code_verifier: {
      type: 'string',
      pattern: '^[A-Za-z0-9._~-]{43,128}$',
      description: 'The PKCE verifier whose S256 challenge the authorization request sent',
    },
    client_id: text(2000, 'The client’s metadata document URL, as in the authorization request'),
    redirect_uri: text(2000, 'The redirect URI of the authorization request'),
    resource: text(2000, 'This gateway’s /mcp (RFC 8707); optional'),
  },
};

/** POST /oauth/token's answer (RFC 6749 §5.1). */
export const TOKEN_ANSWER: JsonSchema = closed('The access token: a new agent key, shown once', {
  access_token: { type: 'string', pattern: '^hlk_a_', description: 'An agent key under the mandate the person chose (`ask_in_client`)' },
  token_type: { const: 'Bearer' },
  expires_in: { type: 'integer', minimum: 1, description: 'Seconds until it expires: 30 days' },
});

/** GET /v0/oauth/requests/{id}: what the console shows the person before they decide. */
export const SIGN_IN_REQUEST: JsonSchema = closed('An MCP client’s request to sign in, waiting for the person’s decision', {
  client: closed('The client, as its metadata document says', {
    id: { ...URL_STRING, description: 'Its client_id: the URL of its metadata document' },
    name: { type: 'string', description: 'Its `client_name`: the client’s own words, not checked by anyone' },
    host: { type: 'string', description: 'The host its metadata document is served from' },
  }),
  redirect_uri: URL_STRING,
  redirect_host: { type: 'string', description: 'Where the browser is sent after the decision' },
  loopback: { type: 'boolean', description: 'The redirect goes to this computer (localhost): only a program running here receives the answer' },
  resource: { ...URL_STRING, description: 'What the token is for: this gateway’s /mcp' },
  expires_at: TIMESTAMP,
});

/** POST /v0/oauth/requests/{id}: where the console sends the browser. */
export const SIGN_IN_DECIDED: JsonSchema = closed('The decision is recorded: the browser goes back to the client', {
  redirect_to: { ...URL_STRING, description: 'The client’s redirect URI with `code` (or `error=access_denied`), `state` and `iss`' },
});
