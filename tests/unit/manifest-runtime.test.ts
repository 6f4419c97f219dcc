/**
 * Runtime rules of a manifest (shared/core/manifest/rules/runtime.ts, spec/manifest.md §5): node, MCP and webhook
 * runtimes, endpoints, tools, limits, and the pricing models a webhook agent may have.
 */
import { describe, expect, it } from 'vitest';
import { type AnyDoc, check, expectProblem, expectValid } from '../support/manifest-checks.js';

describe('runtime', () => {
  it('requires an endpoint for mcp and webhook, a tool for mcp', () => {
    expectProblem(
      check((d) => delete d.runtime.endpoint),
      '$.runtime.endpoint',
      'required',
    );
    expectProblem(
      check((d) => delete d.runtime.tool),
      '$.runtime.tool',
      'required',
    );
    expectProblem(
      check((d) => (d.runtime = { kind: 'webhook' })),
      '$.runtime.endpoint',
      'required',
    );
  });

  it.each(['tables.example.org/mcp', '/mcp', 'ftp://tables.example.org/', 'not a url', 'file:///etc/passwd', 'https://'])(
    'refuses the endpoint %j',
    (endpoint) => {
      expectProblem(
        check((d) => (d.runtime.endpoint = endpoint)),
        '$.runtime.endpoint',
        'absolute http',
      );
    },
  );

  it('accepts http endpoints (publishing requires https, not the manifest)', () => {
    expectValid(check((d) => (d.runtime.endpoint = 'http://localhost:8080/mcp')));
  });

  it('refuses an endpoint on a node runtime, a tool outside mcp', () => {
    expectProblem(
      check((d) => (d.runtime.kind = 'node')),
      '$.runtime.endpoint',
      'node',
    );
    expectProblem(
      check((d) => (d.runtime.kind = 'node')),
      '$.runtime.tool',
      'only mcp',
    );
    expectProblem(
      check((d) => (d.runtime.kind = 'container')),
      '$.runtime.kind',
      'one of',
    );
  });

  it('allows free, per_run and per_unit pricing for webhook agents (units come with streamed chunks), never quote', () => {
    const webhook = (pricing: AnyDoc) =>
      check((d) => {
        d.runtime = { kind: 'webhook', endpoint: 'https://hooks.example.org/x' };
        d.pricing = pricing;
        d.downstream.mode = 'passthrough';
      });
    expectValid(webhook({ model: 'per_unit', currency: 'EUR', amount: '0.01', unit: 'page', max: '1.00' }));
    expectProblem(webhook({ model: 'quote', currency: 'EUR', max: '1.00' }), '$.pricing.model', 'webhook');
    expectValid(webhook({ model: 'per_run', currency: 'EUR', amount: '0.01' }));
    expectValid(webhook({ model: 'free', currency: 'EUR' }));
  });

  it('checks timeout_s: an integer from 1 to 300, default 60', () => {
    for (const bad of [0, 301, 1.5, '60', -1]) {
      expectProblem(
        check((d) => (d.runtime.limits.timeout_s = bad)),
        '$.runtime.limits.timeout_s',
      );
    }
    for (const ok of [1, 300]) expectValid(check((d) => (d.runtime.limits.timeout_s = ok)));
    const r = check((d) => delete d.runtime.limits);
    expectValid(r);
    if (r.ok) expect(r.manifest.runtime.timeoutS).toBe(60);
  });
});

describe('a2a runtime', () => {
  const a2a = (runtime: AnyDoc) =>
    check((d) => {
      d.runtime = runtime;
    });
  const card = 'https://agents.example.org/.well-known/agent-card.json';

  it('takes the agent card as endpoint and a skill', () => {
    const r = a2a({ kind: 'a2a', endpoint: card, skill: 'summarise' });
    expectValid(r);
    if (r.ok) expect(r.manifest.runtime).toEqual({ kind: 'a2a', endpoint: card, skill: 'summarise', timeoutS: 60 });
  });

  it('requires the endpoint and the skill', () => {
    expectProblem(a2a({ kind: 'a2a', skill: 'summarise' }), '$.runtime.endpoint', 'required for an a2a runtime');
    expectProblem(a2a({ kind: 'a2a', endpoint: card }), '$.runtime.skill', 'required for an a2a runtime');
    expectProblem(a2a({ kind: 'a2a', endpoint: card, skill: '' }), '$.runtime.skill');
  });

  it.each(['agents.example.org/.well-known/agent-card.json', 'ftp://agents.example.org/card.json', 'not a url'])('refuses the endpoint %j', (endpoint) => {
    expectProblem(a2a({ kind: 'a2a', endpoint, skill: 'summarise' }), '$.runtime.endpoint', 'absolute http');
  });

  it('accepts http endpoints like mcp agents (publishing requires https, not the manifest)', () => {
    expectValid(a2a({ kind: 'a2a', endpoint: 'http://localhost:8080/.well-known/agent-card.json', skill: 'summarise' }));
  });

  it('refuses a tool on an a2a runtime, a skill outside a2a', () => {
    expectProblem(a2a({ kind: 'a2a', endpoint: card, skill: 'summarise', tool: 'x' }), '$.runtime.tool', 'only mcp');
    expectProblem(
      check((d) => (d.runtime.skill = 'summarise')),
      '$.runtime.skill',
      'only a2a',
    );
    expectProblem(a2a({ kind: 'webhook', endpoint: 'https://hooks.example.org/x', skill: 'summarise' }), '$.runtime.skill', 'only a2a');
  });

  it('may be priced by quote (the final status update carries holon/quote)', () => {
    expectValid(
      check((d) => {
        d.runtime = { kind: 'a2a', endpoint: card, skill: 'summarise' };
        d.pricing = { model: 'quote', currency: 'EUR', max: '1.00' };
        d.downstream.mode = 'passthrough';
      }),
    );
  });
});
