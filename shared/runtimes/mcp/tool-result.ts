/**
 * Reading a tool's CallToolResult as a RunResult: the output (structuredContent, else the first text block as JSON),
 * a declared error code (isError + structuredContent.error.code), and the units / quote in `_meta`.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import { tryParseAmount } from '../../core/money.js';
import { agentError, MAX_DECLARED_MESSAGE, truncate } from '../messages.js';
import type { RunResult } from '../types.js';

/** A value the agent sent (or the input an MCP tool refuses), for a message. */
export function describeValue(v: unknown): string {
  if (typeof v === 'number') return `the number ${String(v)}`;
  if (typeof v === 'string') return `the string ${JSON.stringify(truncate(v, 40))}`;
  if (v === null) return 'null';
  return Array.isArray(v) ? 'an array' : `a ${typeof v}`;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

function readUnits(value: unknown, where: string): Parsed<bigint> {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return { ok: true, value: BigInt(value) };
  if (typeof value === 'string' && /^(0|[1-9][0-9]{0,29})$/.test(value)) return { ok: true, value: BigInt(value) };
  return {
    ok: false,
    message: `${where}["holon/units"] must be a whole number of units (a non-negative integer or a string of digits), not ${describeValue(value)}`,
  };
}

/** Holon's billing entries in a tool result's `_meta`, as the agent sent them (each checked before use). */
type HolonResultMeta = { 'holon/units'?: unknown; 'holon/quote'?: unknown };

/**
 * Holon's billing entries (`holon/units`, `holon/quote`) in a metadata object: an MCP tool result's `_meta`, an A2A
 * agent's final status update (../a2a/). `where` names the object in the messages.
 */
export function readBilling(meta: unknown, where = '_meta'): Parsed<{ units?: bigint; quote?: bigint }> {
  if (typeof meta !== 'object' || meta === null) return { ok: true, value: {} };
  const value: { units?: bigint; quote?: bigint } = {};
  if (Object.hasOwn(meta, 'holon/units')) {
    const units = readUnits((meta as HolonResultMeta)['holon/units'], where);
    if (!units.ok) return units;
    value.units = units.value;
  }
  if (Object.hasOwn(meta, 'holon/quote')) {
    const quote = tryParseAmount((meta as HolonResultMeta)['holon/quote']);
    if (!quote.ok) return { ok: false, message: `${where}["holon/quote"] ${quote.message}` };
    value.quote = quote.value;
  }
  return { ok: true, value };
}

/** `structuredContent.error` = `{code: "<string>", message?}`, if the result has it. */
function declaredError(structured: unknown): { code: string; message?: string } | undefined {
  if (typeof structured !== 'object' || structured === null) return undefined;
  const error = (structured as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null || Array.isArray(error)) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || code === '') return undefined;
  return { code, ...(typeof message === 'string' ? { message: truncate(message, MAX_DECLARED_MESSAGE) } : {}) };
}

function firstText(result: CallToolResult): string | undefined {
  const content: unknown = result.content;
  if (!Array.isArray(content)) return undefined;
  for (const block of content as unknown[]) {
    if (typeof block === 'object' && block !== null && (block as { type?: unknown }).type === 'text') {
      const text = (block as { text?: unknown }).text;
      return typeof text === 'string' ? text : undefined;
    }
  }
  return undefined;
}

export function readResult(result: CallToolResult): RunResult {
  const billing = readBilling(result._meta);
  if (!billing.ok) return agentError(billing.message);
  const extra = billing.value;
  const structured: unknown = result.structuredContent;
  if (result.isError === true) {
    const declared = declaredError(structured);
    if (declared) return { kind: 'error', ...declared, ...extra };
    const text = firstText(result);
    return agentError(
      text
        ? `the tool reported an error without a code (structuredContent.error.code): ${text}`
        : 'the tool reported an error without a code (structuredContent.error.code)',
    );
  }
  if (structured !== undefined) {
    if (typeof structured !== 'object' || structured === null || Array.isArray(structured)) {
      return agentError("the tool result's structuredContent is not a JSON object");
    }
    return { kind: 'output', output: structured, ...extra };
  }
  const text = firstText(result);
  if (text === undefined) return agentError('the tool result has neither structuredContent nor a text block');
  try {
    return { kind: 'output', output: JSON.parse(text) as unknown, ...extra };
  } catch {
    return agentError("the tool result's text block is not JSON");
  }
}
