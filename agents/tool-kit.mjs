// Helpers for tool modules served by agents/host.mjs (the contract is in agents/README.md).

const TOOL_ERROR = Symbol.for('holon.agents.toolError');
const AMOUNT = /^(0|[1-9][0-9]*)(\.[0-9]{1,6})?$/;

/**
 * A declared error: `throw toolError('over_budget', 'why')`. The host answers `isError: true` with
 * `structuredContent: {error: {code, message}}`; the gateway bills it as `interface.errors[code]` says.
 * `extra.units` / `extra.quote` are reported with the error (they matter under `charge_on: attempt`).
 */
export function toolError(code, message, extra = {}) {
  if (typeof code !== 'string' || !/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/.test(code)) {
    throw new TypeError(`toolError: "${String(code)}" is not a snake_case error code`);
  }
  const error = new Error(message ?? code);
  error.name = 'ToolError';
  error.code = code;
  if (extra.units !== undefined) error.units = extra.units;
  if (extra.quote !== undefined) error.quote = extra.quote;
  // A brand rather than a class: the host and a tool may load this file through different module graphs.
  Object.defineProperty(error, TOOL_ERROR, { value: true });
  return error;
}

/** Whether `value` was made by toolError (a declared error, not a crash). */
export function isToolError(value) {
  return typeof value === 'object' && value !== null && value[TOOL_ERROR] === true;
}

/** A decimal amount string ("0.05", at most 6 decimals) → integer micro-units (bigint); null when malformed. */
export function toMicros(amount) {
  if (typeof amount !== 'string' || !AMOUNT.test(amount)) return null;
  const [whole, frac = ''] = amount.split('.');
  return BigInt(whole) * 1_000_000n + BigInt((frac + '000000').slice(0, 6));
}

/** Integer micro-units (bigint) → the shortest decimal string ("0.004"). */
export function formatMicros(micros) {
  const frac = (micros % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${micros / 1_000_000n}${frac ? `.${frac}` : ''}`;
}
