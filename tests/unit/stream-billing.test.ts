/**
 * How a stream ends and what it is billed (docs/lifecycle.md, "How a stream ends"), pure: random chunk sequences
 * (cumulative units), prices, currencies, caps and ways of ending, through the same code the runner uses —
 * `checkChunk` for every chunk, then `decideRun`. For every case: billed ≤ the worst case reserved, billed = the rule's
 * value worked out here independently, and what the receipt says was delivered is exactly what was let through.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { decideRun } from '../../shared/calls/run/decide-outcome.js';
import { checkChunk, StreamEnded, type StreamState } from '../../shared/calls/run/stream-state.js';
import { worstCase } from '../../shared/core/pricing.js';
import type { RunResult } from '../../shared/runtimes/types.js';
import { manifest, mandate, r } from '../support/pricing-fixtures.js';

const ENDINGS = ['completed', 'cancelled', 'disconnected', 'no_answer', 'error', 'timeout'] as const;
type Ending = (typeof ENDINGS)[number];

const streaming = (pricing: { model: 'per_unit' | 'per_run'; currency: 'EUR' | 'USD'; amount: bigint; max?: bigint }) =>
  manifest({
    pricing: { chargeOn: 'success', ...pricing },
    interface: {
      input: { type: 'object' },
      output: { type: 'object' },
      stream: { chunk: { type: 'object', required: ['t'], properties: { t: { type: 'string' } } } },
      errors: {},
      examples: [],
    },
  });

/** The result the runtime hands back for each way of ending (the stream may have ended the run first). */
function resultOf(ending: Ending, units: bigint): RunResult {
  switch (ending) {
    case 'completed':
      return { kind: 'output', output: { ok: true }, units };
    case 'cancelled':
    case 'disconnected':
      return { kind: 'failure', code: 'cancelled', message: 'cancelled' };
    case 'timeout':
      return { kind: 'failure', code: 'timeout', message: 'timeout' };
    default:
      return { kind: 'failure', code: 'agent_error', message: 'the agent failed' };
  }
}

/** micro-units of `amount` in `currency`, in EUR (the mandate's currency): USD at 0.92, rounded up as prices are. */
const toEur = (amount: bigint, currency: 'EUR' | 'USD') => (currency === 'EUR' ? amount : (amount * 92n + 99n) / 100n);

describe('what a stream is billed, however it ends', () => {
  test('billed ≤ worst case; billed = the rule; delivered = what was let through', () => {
    fc.assert(
      fc.property(
        fc.record({
          model: fc.constantFrom('per_unit' as const, 'per_run' as const),
          currency: fc.constantFrom('EUR' as const, 'USD' as const),
          amount: fc.bigInt({ min: 1n, max: 50_000n }),
          maxUnits: fc.integer({ min: 1, max: 40 }),
          cap: fc.option(fc.bigInt({ min: 1n, max: 3_000_000n }), { nil: undefined }),
          steps: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 30 }),
          ending: fc.constantFrom(...ENDINGS),
        }),
        ({ model, currency, amount, maxUnits, cap, steps, ending }) => {
          const max = amount * BigInt(maxUnits);
          const m = streaming({ model, currency, amount, ...(model === 'per_unit' ? { max } : {}) });
          const budget = mandate({ budget: { fx: { USD: r('0.92') } } }).budget;
          const wc = worstCase(m, budget, cap);
          fc.pre(wc.ok);
          const state: StreamState = { chunks: 0, units: 0n, active: false };
          let units = 0n;
          for (const step of steps) {
            units += BigInt(step);
            const checked = checkChunk(m, { chunk: { t: 'x' }, units }, state, { budget, maxCost: cap });
            if (checked instanceof StreamEnded) {
              state.ended = checked;
              break;
            }
            state.active = true;
            state.chunks += 1;
            state.units = checked.total;
          }
          // A per_unit stream that could not pass its budget may still be cut by the caller or end otherwise.
          const result = resultOf(ending, state.units);
          const decided = decideRun(
            m,
            result,
            { budget, maxCost: cap },
            {
              state,
              ...(ending === 'disconnected' ? { cancelWhy: 'disconnected' as const } : {}),
              streamed: true,
            },
          );
          const own = BigInt(decided.outcome.own);
          expect(own).toBeLessThanOrEqual(wc.ok ? wc.own : 0n);
          expect(decided.outcome.billed).toBe(own > 0n);
          expect(decided.outcome.stream!.delivered).toEqual({ chunks: state.chunks, units: state.units.toString() });

          // The rule, worked out here.
          const price = model === 'per_unit' ? toEur(amount * state.units < max ? amount * state.units : max, currency) : toEur(amount, currency);
          const capped = wc.ok && price > wc.own ? wc.own : price;
          let expected: bigint;
          let endedBy: string;
          if (state.ended) {
            endedBy = 'budget';
            expected = model === 'per_unit' ? capped : 0n;
            expect(state.ended.endedBy).toBe('budget');
          } else if (ending === 'cancelled' || ending === 'disconnected') {
            endedBy = ending;
            expected = model === 'per_unit' ? capped : 0n;
          } else if (ending === 'completed') {
            endedBy = 'completed';
            expected = capped;
          } else {
            endedBy = ending === 'timeout' ? 'timeout' : 'error';
            expected = 0n;
          }
          expect(decided.outcome.stream!.ended_by).toBe(endedBy);
          expect(own).toBe(expected);
          // No chunk let through costs more than was reserved.
          if (model === 'per_unit') expect(toEur(amount * state.units, currency)).toBeLessThanOrEqual(wc.ok ? wc.own : 0n);
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('a chunk is refused for units that go down, are not whole, break the chunk schema, or are not JSON', () => {
    const m = streaming({ model: 'per_unit', currency: 'EUR', amount: 10_000n, max: 1_000_000n });
    const budget = mandate().budget;
    const state: StreamState = { chunks: 1, units: 5n, active: true };
    const money = { budget, maxCost: undefined };
    const ended = (x: unknown) => (x instanceof StreamEnded ? { by: x.endedBy, code: x.code } : x);
    expect(ended(checkChunk(m, { chunk: { t: 'a' }, units: 4 }, state, money))).toEqual({ by: 'error', code: 'agent_error' });
    expect(ended(checkChunk(m, { chunk: { t: 'a' }, units: 5.5 }, state, money))).toEqual({ by: 'error', code: 'agent_error' });
    expect(ended(checkChunk(m, { chunk: { t: 1 }, units: 6 }, state, money))).toEqual({ by: 'error', code: 'invalid_output' });
    expect(ended(checkChunk(m, { chunk: { t: 'a', n: 1n }, units: 6 }, state, money))).toEqual({ by: 'error', code: 'agent_error' });
    expect(ended(checkChunk(m, { chunk: { t: 'a' }, units: 101 }, state, money))).toEqual({ by: 'budget', code: 'budget_reached' });
    expect(checkChunk(m, { chunk: { t: 'a' }, units: 100 }, state, money)).toEqual({ text: '{"t":"a"}', total: 100n });
    // Units left out keep the count where it was.
    expect(checkChunk(m, { chunk: { t: 'a' }, units: undefined }, state, money)).toEqual({ text: '{"t":"a"}', total: 5n });
    // An agent that declares no stream cannot emit.
    const plain = manifest();
    expect(ended(checkChunk(plain, { chunk: {}, units: undefined }, state, money))).toEqual({ by: 'error', code: 'agent_error' });
  });
});
