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

/**
 * Fetch `url` and read the answer's body as text, bounded: `{status, ok, headers, text}`. Redirects are not followed.
 * Every failure is what `fail(why)` returns (a toolError, e.g. `(why) => toolError('upstream_error', \`the API ${why}\`)`),
 * `why` being "could not be reached (ECONNREFUSED)", "did not answer within 5000 ms", "answered with more than
 * 1048576 bytes" or "sent an answer that could not be read"; the caller's cancellation (`signal`) is rethrown as it is.
 * `timeoutMs` (optional) bounds the whole exchange, body included; `maxBytes` bounds the body (a longer one is a
 * failure, never cut).
 */
export async function fetchText(url, init, { signal, timeoutMs, maxBytes, fail }) {
  const timeout = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
  const signals = [signal, timeout].filter((s) => s !== undefined);
  const failure = (error, why) => {
    if (signal?.aborted) return signal.reason ?? error;
    return fail(timeout?.aborted ? `did not answer within ${timeoutMs} ms` : why);
  };
  let response;
  try {
    response = await fetch(url, { ...init, signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0], redirect: 'error' });
  } catch (e) {
    throw failure(e, `could not be reached (${e?.cause?.code ?? e?.name ?? 'error'})`);
  }
  let text;
  try {
    text = await readAtMost(response, maxBytes);
  } catch (e) {
    throw failure(e, 'sent an answer that could not be read');
  }
  if (text === undefined) throw fail(`answered with more than ${maxBytes} bytes`);
  return { status: response.status, ok: response.ok, headers: response.headers, text };
}

/** The body as UTF-8 text, or undefined (the rest left unread) once it is longer than `maxBytes`. */
async function readAtMost(response, maxBytes) {
  if (Number(response.headers.get('content-length')) > maxBytes) {
    await response.body?.cancel().catch(() => {});
    return undefined;
  }
  const chunks = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    if (size > maxBytes) return undefined; // leaving the loop cancels the stream
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `JSON.parse(text)`, or undefined when the text is not JSON. */
export function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
