/**
 * What a run's stream delivered and whether it ended the run itself (pure): kept by run-stream.ts, read by
 * decide-outcome.ts, recorded in the receipt.
 */
import { compileInterface } from '../../core/manifest/interface-validator.js';
import type { Manifest } from '../../core/manifest/types.js';
import { type MandateBudget, unitsWithinReservation } from '../../core/pricing.js';
import type { EndedBy, StreamRecord } from '../events/types.js';

/** The largest chunk, progress message or question, as JSON. */
const MAX_EVENT_BYTES = 1024 * 1024;

/** Why the stream ended the run before the agent did. */
export class StreamEnded extends Error {
  override readonly name = 'StreamEnded';
  constructor(
    readonly endedBy: Extract<EndedBy, 'budget' | 'no_answer' | 'error'>,
    readonly code: 'budget_reached' | 'no_answer' | 'invalid_output' | 'agent_error',
    message: string,
  ) {
    super(message);
  }
}

/** What the run's stream delivered, and whether it ended the run itself. */
export interface StreamState {
  chunks: number;
  units: bigint;
  /** The agent asked at least once, or emitted: its receipt says what was delivered and how it ended. */
  active: boolean;
  ended?: StreamEnded;
}

/** What the receipt records of a run that streamed or asked: what was delivered, how it ended. */
export function streamRecord(state: StreamState, endedBy: EndedBy): StreamRecord {
  return { delivered: { chunks: state.chunks, units: state.units.toString() }, ended_by: endedBy };
}

/** A value as the JSON the stream keeps, or why it cannot be: not JSON, or too large. */
export function jsonText(value: unknown, what: string): string | StreamEnded {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) return new StreamEnded('error', 'agent_error', `${what} is not JSON`);
  if (Buffer.byteLength(text) > MAX_EVENT_BYTES) return new StreamEnded('error', 'agent_error', `${what} is over ${MAX_EVENT_BYTES} bytes`);
  return text;
}

/**
 * One chunk checked before anyone can read it: its units (cumulative, never fewer than before), its JSON against
 * `interface.stream.chunk`, and its cost against the reservation. What to deliver, or why the run ends here.
 */
export function checkChunk(
  manifest: Manifest,
  emitted: { chunk: unknown; units: number | bigint | undefined },
  state: StreamState,
  money: { budget: MandateBudget; maxCost: bigint | undefined },
): { text: string; total: bigint } | StreamEnded {
  const { units } = emitted;
  let total = state.units;
  if (units !== undefined) {
    const n = typeof units === 'bigint' ? units : Number.isSafeInteger(units) ? BigInt(units) : -1n;
    if (n < 0n) return new StreamEnded('error', 'agent_error', `a chunk's units must be a non-negative whole number, got ${String(units)}`);
    if (n < state.units) return new StreamEnded('error', 'agent_error', `a chunk's units are cumulative: ${n} after ${state.units}`);
    total = n;
  }
  const validate = compileInterface(manifest).chunk;
  if (!validate) return new StreamEnded('error', 'agent_error', 'the agent emitted a chunk but declares no interface.stream');
  const text = jsonText(emitted.chunk, 'a chunk');
  if (text instanceof StreamEnded) return text;
  if (validate(JSON.parse(text)).length > 0) return new StreamEnded('error', 'invalid_output', 'a chunk does not match interface.stream.chunk');
  if (!unitsWithinReservation(manifest, total, money.budget, money.maxCost)) {
    return new StreamEnded('budget', 'budget_reached', `${total} units would cost more than was reserved for the call`);
  }
  return { text, total };
}
