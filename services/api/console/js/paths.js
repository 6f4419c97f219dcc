// @ts-check
// Where an agent and a version live: in the API (/v0/agents/<ns>/<name>, …@<version>) and in the console
// (#/try/<ns>/<name>); and a receipt's page in the console (#/receipts/<id>). Each segment is encoded on its own,
// so the "/" between namespace and name stays a "/".

/**
 * "alice/tables" → "alice/tables", each segment URL-encoded.
 * @param {string} id
 */
const agentPath = (id) => id.split('/').map(encodeURIComponent).join('/');

/** GET /v0/agents/{ns}/{name}. @param {string} id */
export const agentUrl = (id) => `/v0/agents/${agentPath(id)}`;

/**
 * /v0/agents/{ns}/{name}@{version}: a published version (yank it, re-run its evaluation).
 * @param {string} id
 * @param {string} version
 */
export const versionUrl = (id, version) => `${agentUrl(id)}@${encodeURIComponent(version)}`;

/** /v0/agents/{ns}/{name}/credential: the endpoint credential of an agent. @param {string} id */
export const credentialUrl = (id) => `${agentUrl(id)}/credential`;

/**
 * /v0/admin/agents/{ns}/{name}@{version}/yank: the operator withdraws a version.
 * @param {string} id
 * @param {string} version
 */
export const adminYankUrl = (id, version) => `/v0/admin/agents/${agentPath(id)}@${encodeURIComponent(version)}/yank`;

/**
 * The console's page of an agent: #/try/<ns>/<name>, with an optional query (already made, "?q=…").
 * @param {string} id
 * @param {string} [query]
 */
export const tryHash = (id, query = '') => `#/try/${agentPath(id)}${query}`;

/**
 * The console's page of a receipt: #/receipts/<id>.
 * @param {string} id
 */
export const receiptHash = (id) => `#/receipts/${encodeURIComponent(id)}`;

/** A version reference a person types: "alice/tables@1.0.0" → its agent id and version, or null. */
const VERSION_REF = /^([a-z0-9][a-z0-9-]*\/[a-z0-9][a-z0-9-]*)@([0-9A-Za-z.+-]+)$/;

/** @param {string} text */
export function parseVersionRef(text) {
  const m = VERSION_REF.exec(text);
  return m ? { id: /** @type {string} */ (m[1]), version: /** @type {string} */ (m[2]) } : null;
}
