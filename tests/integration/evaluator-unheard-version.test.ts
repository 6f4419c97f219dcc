/**
 * An evaluator that has not heard of a publish yet (services/evaluator/run-evaluation.ts, shared/registry/published.ts
 * `knownVersion`): the evaluation's job can reach a separate evaluator process before the `agents-published`
 * notification does. The version's row is written directly, as another process's publish would have, without the
 * notification: the evaluator reads it from Postgres and evaluates it rather than ending the evaluation `error`. A
 * version yanked since is evaluated and stays hidden; one whose manifest no longer validates ends `error`.
 * The agent is a webhook on loopback that upper-cases its text, judged by the repository's text.transform suite.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startEvaluationSweeper } from '../../services/evaluator/recovery.js';
import { queueEvaluations } from '../../shared/evaluation/store.js';
import { ensureAccount } from '../../shared/ledger/accounts.js';
import { loadSuites, suiteSummary } from '../../shared/evaluation/suites.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { poll } from '../support/poll.js';

let upper: Server;
let endpoint: string;

beforeAll(async () => {
  upper = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const input = JSON.parse(body) as { text: string };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ text: input.text.toUpperCase() }));
    });
  });
  await new Promise<void>((resolve) => upper.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(upper.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => upper.close(() => resolve())));

function manifest(id: string, version: string): Record<string, unknown> {
  return {
    id,
    version,
    summary: 'Returns the text upper-cased, published elsewhere',
    capabilities: ['text.transform'],
    license: 'proprietary',
    interface: {
      input: { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string' } } },
      output: { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string' } } },
    },
    pricing: { model: 'per_run', currency: 'EUR', amount: '0.01' },
    runtime: { kind: 'webhook', endpoint, limits: { timeout_s: 10 } },
  };
}

/** Queue one evaluation of `id@version` (its job never sent) and let a sweep a minute later hand it to the evaluator. */
async function evaluateUnheard(g: TestGateway, id: string, version: string) {
  const ctx = g.gw.context;
  const suites = await loadSuites({ publicDir: 'evals' }, ctx.log);
  const loaded = suites.get('text.transform')!;
  const [row] = await queueEvaluations(g.db.knex, { agentId: id, version }, [suiteSummary(loaded)]);
  const stop = startEvaluationSweeper({ ...ctx, now: () => Date.now() + 60_000 }, 3_600_000, 30_000);
  try {
    const ended = await poll(
      async () => {
        const r = await g.db.knex('evaluations').where({ id: row!.id }).first('status', 'passed', 'total', 'reason');
        return r && ['passed', 'failed', 'error'].includes(r.status) ? r : undefined;
      },
      { what: 'the evaluation to end', timeoutMs: 30_000 },
    );
    return { ended, cases: loaded.suite.cases.length };
  } finally {
    await stop();
  }
}

test('a version this evaluator has not heard of is read from Postgres and evaluated; a yanked one stays hidden; an unreadable one ends error', async () => {
  await useAudited(await startTestGateway({ roles: ['evaluator'], config: { allowPrivateEndpoints: true } }), async (g) => {
    const knex = g.db.knex;
    const ctx = g.gw.context;
    await ensureAccount(knex, 'dave', 'user');
    const publish = (id: string, version: string) =>
      knex('published_versions').insert({ agent_id: id, version, author: 'dave', manifest: JSON.stringify(manifest(id, version)) });

    await publish('dave/upper', '1.0.0');
    expect(ctx.registry.get('dave/upper', '1.0.0')).toBeUndefined(); // the notification never came
    const first = await evaluateUnheard(g, 'dave/upper', '1.0.0');
    expect(first.ended).toEqual({ status: 'passed', passed: first.cases, total: first.cases, reason: null });
    expect(ctx.registry.list().map((a) => `${a.manifest.id}@${a.manifest.version}`)).toContain('dave/upper@1.0.0');

    // Published, then yanked, both elsewhere: evaluated (as a yanked version this process knew would be), not listed.
    await publish('dave/upper', '1.1.0');
    await knex('yanked_versions').insert({ agent_id: 'dave/upper', version: '1.1.0', reason: 'author', yanked_by: 'dave' });
    const yanked = await evaluateUnheard(g, 'dave/upper', '1.1.0');
    expect(yanked.ended).toMatchObject({ status: 'passed', passed: yanked.cases });
    expect(ctx.registry.get('dave/upper', '1.1.0')?.manifest.version).toBe('1.1.0');
    expect(ctx.registry.list().map((a) => `${a.manifest.id}@${a.manifest.version}`)).not.toContain('dave/upper@1.1.0');

    // A row whose manifest no longer validates (here: it names another version): nothing to evaluate.
    await knex('published_versions').insert({
      agent_id: 'dave/upper',
      version: '2.0.0',
      author: 'dave',
      manifest: JSON.stringify(manifest('dave/upper', '9.9.9')),
    });
    const unreadable = await evaluateUnheard(g, 'dave/upper', '2.0.0');
    expect(unreadable.ended).toEqual({ status: 'error', passed: 0, total: unreadable.cases, reason: "the version's manifest could not be read" });
    expect(ctx.registry.get('dave/upper', '2.0.0')).toBeUndefined();
  });
});
