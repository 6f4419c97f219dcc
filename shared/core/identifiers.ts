/**
 * Names the gateway recognises everywhere: account handles, agent ids, capability classes, agent refs.
 * One module owns them so that a manifest, a mandate pattern and a call all agree on what is valid.
 */
import semver from 'semver';

/** GitHub-login rules, lower case: 2–39 of a-z 0-9 '-', not starting or ending with '-'. */
export const HANDLE_PATTERN = '^[a-z0-9][a-z0-9-]{0,37}[a-z0-9]$';
/** `<namespace>/<name>`: each part follows the handle rules. */
export const AGENT_ID_PATTERN = '^[a-z0-9][a-z0-9-]{0,37}[a-z0-9]/[a-z0-9][a-z0-9-]{0,37}[a-z0-9]$';
/** A capability class: dot-separated lowercase words, a word may contain inner '-' ("data.csv-profile"). */
export const CAPABILITY_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*(?:\\.[a-z0-9]+(?:-[a-z0-9]+)*)*$';

const HANDLE = new RegExp(HANDLE_PATTERN);
export const CAPABILITY_CLASS = new RegExp(CAPABILITY_PATTERN);
const AGENT_ID = new RegExp(AGENT_ID_PATTERN);
/** A wallet that paid from outside (docs/payments.md): `x402:` and its address, lower case. */
const PAYER_WALLET = /^x402:0x[0-9a-f]{40}$/;
const PAYMENT_MANDATE_ID = /^x402:0x[0-9a-f]{40}\/[a-z0-9][a-z0-9-]{0,37}[a-z0-9]$/;

export function isHandle(value: string): boolean {
  return HANDLE.test(value);
}

/** The issuer of a mandate the gateway made for a payment: `x402:<payer address>`. */
export function isPayerWallet(value: string): boolean {
  return PAYER_WALLET.test(value);
}

/** A payment's mandate id or grantee: `x402:<payer address>/<name>`. */
export function isPaymentMandateId(value: string): boolean {
  return PAYMENT_MANDATE_ID.test(value);
}

/** `<handle>/<name>`, both parts with handle rules: an agent id or a grantee. */
export function isAgentId(value: string): boolean {
  return AGENT_ID.test(value);
}

export function isCapabilityClass(value: string): boolean {
  return value.length <= 128 && CAPABILITY_CLASS.test(value);
}

export interface AgentRef {
  id: string;
  namespace: string;
  name: string;
  range?: string;
}

/** `ns/name` or `ns/name@<semver range>`; null when malformed (bad handle, empty, padded or invalid range). */
export function parseAgentRef(ref: string): AgentRef | null {
  if (ref.length > 200) return null;
  const at = ref.indexOf('@');
  const id = at < 0 ? ref : ref.slice(0, at);
  if (!isAgentId(id)) return null;
  const [namespace, name] = id.split('/') as [string, string];
  if (at < 0) return { id, namespace, name };
  const range = ref.slice(at + 1);
  if (range.trim() === '' || range !== range.trim() || semver.validRange(range) === null) return null;
  return { id, namespace, name, range };
}
