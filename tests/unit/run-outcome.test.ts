/**
 * What an agent's result makes of a call (shared/calls/run/decide-outcome.ts decideOutcome). An agent cannot report one of the
 * gateway's own error codes: `gateway_error`, `cancelled`, `file_not_found`… are left out of its Agent Record
 * (NOT_THE_AGENTS_DOING), so an agent saying them would hide its failures; they become `agent_error`, unbilled.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideOutcome } from '../../shared/calls/run/decide-outcome.js';
import { isErrorCode } from '../../shared/core/manifest/schema.js';
import { RESERVED_ERROR_CODES } from '../../shared/core/manifest/types.js';
import { buildManifest } from '../support/manifest-builder.js';

const budget = { currency: 'EUR', fx: {} };
const manifest = buildManifest({
  pricing: { model: 'per_run', amount: 10_000n, chargeOn: 'attempt' },
  interface: { input: { type: 'object' }, output: { type: 'object' }, errors: { no_table: { description: 'none found', billed: true } }, examples: [] },
});

describe('decideOutcome', () => {
  it.each(RESERVED_ERROR_CODES)('an agent reporting the gateway code %s fails agent_error, unbilled', (code) => {
    const { outcome, output } = decideOutcome(manifest, { kind: 'error', code, message: 'not mine to say' }, budget, undefined);
    expect(outcome).toEqual({ kind: 'failure', code: 'agent_error', billed: false, own: '0' });
    expect(output).toBeUndefined();
  });

  it('a declared code is the agent’s error, billed as the manifest says; an undeclared plain code is kept as reported', () => {
    expect(decideOutcome(manifest, { kind: 'error', code: 'no_table' }, budget, undefined).outcome).toEqual({
      kind: 'declared_error',
      code: 'no_table',
      billed: true,
      own: '10000',
    });
    fc.assert(
      fc.property(
        fc
          .stringMatching(/^[a-z][a-z0-9]{0,10}(_[a-z0-9]{1,8}){0,2}$/)
          .filter((c) => isErrorCode(c) && !(RESERVED_ERROR_CODES as readonly string[]).includes(c)),
        (code) => {
          const { outcome } = decideOutcome(manifest, { kind: 'error', code }, budget, undefined);
          expect(outcome.kind).toBe('declared_error');
          expect(outcome.code).toBe(code);
        },
      ),
    );
  });
});
