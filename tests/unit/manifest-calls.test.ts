/**
 * Delegation rules of a manifest (shared/core/manifest/rules/calls.ts, spec/manifest.md §7): the `calls` entries and
 * `downstream`, and how they bound the agent's worst case.
 */
import { describe, it } from 'vitest';
import { check, expectProblem, expectValid } from '../support/manifest-checks.js';

describe('calls and downstream', () => {
  it('refuses a call max_cost above the passthrough cap', () => {
    expectProblem(
      check((d) => (d.calls[0].max_cost = '0.41')),
      '$.calls[0].max_cost',
      'downstream.cap',
    );
    expectValid(check((d) => (d.calls[0].max_cost = '0.40')));
  });

  it('bounds max_cost by the own worst case in included mode', () => {
    // spec example: per_unit, max 0.50
    expectValid(check((d) => (d.downstream = { mode: 'included' })));
    expectValid(
      check((d) => {
        d.downstream = { mode: 'included' };
        d.calls[0].max_cost = '0.50';
      }),
    );
    expectProblem(
      check((d) => {
        d.downstream = { mode: 'included' };
        d.calls[0].max_cost = '0.500001';
      }),
      '$.calls[0].max_cost',
      'own worst case',
    );
    expectProblem(
      check((d) => {
        d.downstream = { mode: 'included' };
        d.pricing = { model: 'per_run', currency: 'EUR', amount: '0.01' };
      }),
      '$.calls[0].max_cost',
      'own worst case',
    );
    expectProblem(
      check((d) => {
        d.downstream = { mode: 'included' };
        d.pricing = { model: 'free', currency: 'EUR' };
      }),
      '$.calls[0].max_cost',
      'own worst case',
    );
  });

  it('requires downstream.mode when calls are declared', () => {
    expectProblem(
      check((d) => delete d.downstream),
      '$.downstream.mode',
      'calls',
    );
    expectProblem(
      check((d) => delete d.downstream.mode),
      '$.downstream.mode',
      'required',
    );
    expectProblem(
      check((d) => (d.downstream.mode = 'split')),
      '$.downstream.mode',
      'one of',
    );
  });

  it('requires a cap with passthrough when calls are declared', () => {
    expectProblem(
      check((d) => delete d.downstream.cap),
      '$.downstream.cap',
      'passthrough',
    );
    expectValid(
      check((d) => {
        delete d.downstream.cap;
        d.calls = [];
      }),
    );
  });

  it('allows downstream (and a cap) without calls', () => {
    expectValid(check((d) => delete d.calls));
  });

  it('requires exactly one of capability or agent, and a max_cost', () => {
    expectProblem(
      check((d) => (d.calls[0] = { max_cost: '0.01' })),
      '$.calls[0]',
      'capability or an agent',
    );
    expectProblem(
      check((d) => (d.calls[0].agent = 'acme/ocr')),
      '$.calls[0]',
      'not both',
    );
    expectProblem(
      check((d) => delete d.calls[0].max_cost),
      '$.calls[0].max_cost',
      'required',
    );
    expectProblem(
      check((d) => (d.calls[0].capability = 'OCR')),
      '$.calls[0].capability',
      'capability class',
    );
    expectProblem(
      check((d) => (d.calls = 'ocr.page')),
      '$.calls',
      'array',
    );
  });

  it.each(['acme/ocr', 'acme/ocr@^1.2', 'acme/ocr@1.2.3', 'acme/ocr@>=1.0.0 <2.0.0', 'acme/ocr@~2', 'acme/ocr@*'])(
    'accepts the agent reference %s',
    (agent) => {
      expectValid(check((d) => (d.calls[0] = { agent, max_cost: '0.01' })));
    },
  );

  it.each(['acme', 'Acme/ocr', 'acme/ocr@', 'acme/ocr@not-a-range', 'acme/ocr@^1.2@3', 'a/ocr'])('refuses the agent reference %j', (agent) => {
    expectProblem(
      check((d) => (d.calls[0] = { agent, max_cost: '0.01' })),
      '$.calls[0].agent',
    );
  });
});
