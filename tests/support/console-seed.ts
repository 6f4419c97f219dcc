/**
 * A hosted gateway with the traffic the console's pages show (scripts/console-screenshots.ts, console tests):
 *   - lena, signed in with GitHub (the fake GitHub of tests/support/fake-github.ts), has published two webhook agents
 *     served here on loopback (allowPrivateEndpoints): lena/shout (MIT, source github.com/lena/shout, evaluated by the
 *     shipped text.transform suite: passed) and lena/headline (proprietary, a credential set, no suite applies); both
 *     have been called by alice, so both have earnings;
 *   - alice, signed up by email, with the admin's demo credit, two mandates (alice/work, and alice/reviewed whose
 *     calls above 0.05 EUR are held for approval), an extra agent key, calls that succeeded, failed, were denied and
 *     were rejected_input, one delegated call with children (examples/invoice-pipeline hires text.count and
 *     text.translate), one held call approved and run, and two held calls pending (one with a long input);
 *   - mallory, signed up and disabled by the admin, so the moderation log has an entry.
 *
 * Everything runs in this process, vitest or not: the gateway is startTestGateway's (gateway.ts) in its `standalone`
 * form — every role, the test registry, on a throw-away database created on DATABASE_URL's server (default
 * postgres://postgres@127.0.0.1:5432/postgres) and a Redis key prefix on REDIS_URL (default redis://127.0.0.1:6379),
 * both removed by `stop()`. The gateway listens on a port picked first, and HOLON_PUBLIC_URL is that origin: the
 * Origin guard accepts the browser's writes from it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Config } from '../../shared/platform/config.js';
import { startFakeGitHub } from './fake-github.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import { signInWithGitHub } from './github-accounts.js';
import { ADMIN_KEY, send, signUp, type Reply } from './http.js';
import { poll } from './poll.js';
import { freePort, REPO_ROOT } from './processes.js';

/** The admin key of the hosted test gateways. */
const CONSOLE_ADMIN_KEY = ADMIN_KEY;

const REGISTRY = [path.join(REPO_ROOT, 'examples'), path.join(REPO_ROOT, 'tests/fixtures/registry')];
const FILE_SECRET = 'console-seed-file-secret-0123456789abcdefghij';

interface SeededAccount {
  handle: string;
  human: string;
}

export interface ConsoleGateway {
  /** http://127.0.0.1:<port>, also the gateway's HOLON_PUBLIC_URL. */
  url: string;
  caller: SeededAccount;
  author: SeededAccount;
  adminKey: string;
  /** The receipt of the delegated call (examples/invoice-pipeline), whose tree has children. */
  receiptWithChildren?: string;
  /** The month (UTC, YYYY-MM) the traffic is in. */
  month: string;
  stop(): Promise<void>;
}

/** `send`, and the answer must have one of the expected statuses. */
async function expectStatus<T = any>(what: string, reply: Promise<Reply<T>>, ...statuses: number[]): Promise<T> {
  const r = await reply;
  if (!statuses.includes(r.status)) throw new Error(`${what}: expected HTTP ${statuses.join(' or ')}, got ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Every role on a throw-away database and Redis prefix (startTestGateway's `standalone`), the test registry and the shipped suites. */
function startConsoleGateway(options: { hosted?: boolean; config?: Partial<Config> }): Promise<TestGateway> {
  return startTestGateway({
    standalone: { name: 'console' },
    ...(options.hosted ? { hosted: true } : {}),
    config: { registryDirs: REGISTRY, evalsDir: path.join(REPO_ROOT, 'evals'), ...options.config },
  });
}

/** A dev gateway (`npm start`'s: no keys, the dev mandates of examples/mandates) for the console's dev pages. */
export function startConsoleDevGateway(config: Partial<Config> = {}): Promise<TestGateway> {
  return startConsoleGateway({ config: { mandatesDir: path.join(REPO_ROOT, 'examples/mandates'), ...config } });
}

/**
 * lena's agents, on loopback: /shout upper-cases `text` (what the text.transform suite expects); /headline
 * capitalises each word, and answers 500 when there are no words (a failed call).
 */
async function startLenasAgents(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify(body));
      let input: any;
      try {
        input = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      } catch {
        return answer(400, { error: { code: 'bad_json', message: 'not JSON' } });
      }
      const text = typeof input?.text === 'string' ? input.text : '';
      if (req.url === '/shout') return answer(200, { text: text.toUpperCase() });
      if (req.url === '/headline') {
        if (!text.trim()) return answer(500, { error: { code: 'no_words', message: 'nothing to capitalise' } });
        return answer(200, { text: text.replace(/\p{L}[\p{L}']*/gu, (w: string) => w[0]!.toUpperCase() + w.slice(1).toLowerCase()) });
      }
      return answer(404, { error: { code: 'not_found', message: 'no such agent here' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const TEXT_INTERFACE = {
  input: { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string', maxLength: 10000 } } },
  output: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
};

/** A long invoice text, to be held for approval: the approvals page folds an input this long. */
const LONG_INVOICE = [
  'INVOICE 2026-1187 — Nordlicht Studio GmbH, Kastanienallee 12, 10435 Berlin',
  'Bill to: Alice Martin, 4 rue des Lilas, 69003 Lyon',
  ...Array.from(
    { length: 14 },
    (_, i) => `Line ${i + 1}: ${['Illustration, cover', 'Layout, 16 pages', 'Colour proofing', 'Typesetting, index'][i % 4]} — ${(i + 2) * 3} h at 65.00 EUR`,
  ),
  'Subtotal 8,190.00 EUR; VAT 19 % 1,556.10 EUR; total due 9,746.10 EUR within 30 days.',
  'Please quote the invoice number with your payment. Thank you for your business.',
].join('\n');

/** Start a hosted gateway and fill it with the traffic the console's pages show. */
export async function seedConsoleGateway(): Promise<ConsoleGateway> {
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    const errors: unknown[] = [];
    for (const s of stops.reverse()) await s().catch((e) => errors.push(e));
    stops.length = 0;
    if (errors.length) throw errors[0];
  };
  try {
    const github = await startFakeGitHub();
    stops.push(() => github.close());
    const agents = await startLenasAgents();
    stops.push(() => agents.close());
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const g = await startConsoleGateway({
      hosted: true,
      config: { port, publicUrl: url, allowPrivateEndpoints: true, fileSecret: FILE_SECRET, ...github.config },
    });
    stops.push(() => g.stop());

    // ---- the author: signed in with GitHub, two agents published
    const lena = await signInWithGitHub(url, github, 'lena', 7310);
    github.addRepository({ owner: 'lena', name: 'shout' });
    const webhook = (route: string) => ({ kind: 'webhook', endpoint: `${agents.url}${route}`, limits: { timeout_s: 10 } });
    await expectStatus(
      'publishing lena/shout',
      send(url, 'POST', '/v0/agents', {
        key: lena.human,
        body: {
          id: 'lena/shout',
          version: '1.0.0',
          summary: 'Upper-cases text, for headlines and alerts',
          capabilities: ['text.transform'],
          license: 'MIT',
          source: { repository: 'https://github.com/lena/shout' },
          interface: { ...TEXT_INTERFACE, examples: [{ input: { text: 'Hello, Holon' }, output: { text: 'HELLO, HOLON' } }] },
          pricing: { model: 'per_run', currency: 'EUR', amount: '0.02' },
          runtime: webhook('/shout'),
          data: { retention: 'none', region: ['eu'], training: false },
        },
      }),
      201,
    );
    await expectStatus(
      'setting the credential of lena/headline',
      send(url, 'PUT', '/v0/agents/lena/headline/credential', { key: lena.human, body: { token: 'headline-endpoint-token-1c2e' } }),
      200,
    );
    await expectStatus(
      'publishing lena/headline',
      send(url, 'POST', '/v0/agents', {
        key: lena.human,
        body: {
          id: 'lena/headline',
          version: '1.2.0',
          summary: 'Capitalises every word of a title',
          capabilities: ['text.headline'],
          license: 'proprietary',
          interface: TEXT_INTERFACE,
          pricing: { model: 'per_run', currency: 'EUR', amount: '0.03' },
          runtime: webhook('/headline'),
          data: { retention: 'none', region: ['eu'], training: false },
        },
      }),
      201,
    );

    // ---- the caller: signed up by email, credited by the admin, two mandates and an extra agent key
    const alice = await signUp(url, 'alice');
    await expectStatus(
      'the admin’s credit to alice',
      send(url, 'POST', '/v0/admin/credit', {
        key: CONSOLE_ADMIN_KEY,
        headers: { 'idempotency-key': 'console-seed-credit-alice' },
        body: { account: 'alice', amount: '20.00' },
      }),
      201,
    );
    const mandate = (body: Record<string, unknown>) =>
      expectStatus(`the mandate ${String(body.id)}`, send(url, 'POST', '/v0/mandates', { key: alice.human, body }), 201);
    await mandate({
      id: 'work',
      grantee: 'alice/assistant',
      allow: { agents: ['examples/*', 'lena/*'], capabilities: ['text.*', 'test.*'] },
      budget: { total: '10.00', currency: 'EUR', per_call: '1.00' },
      delegation: { max_depth: 1 },
    });
    await mandate({
      id: 'reviewed',
      grantee: 'alice/researcher',
      allow: { agents: ['examples/*'], capabilities: ['text.*'] },
      budget: { total: '3.00', currency: 'EUR' },
      approval: { above: '0.05' },
      delegation: { max_depth: 1 },
    });
    const key = async (m: string) =>
      (await expectStatus(`an agent key for ${m}`, send(url, 'POST', '/v0/keys', { key: alice.human, body: { mandate: m } }), 201)).key as string;
    const work = await key('alice/work');
    const reviewed = await key('alice/reviewed');

    const call = (agentKey: string, body: Record<string, unknown>, ...statuses: number[]) =>
      expectStatus(`a call to ${String(body.agent)}`, send(url, 'POST', '/v0/calls', { key: agentKey, body }), ...statuses);
    // Succeeded.
    await call(work, { agent: 'examples/echo-upper', input: { text: 'Quarterly report is ready' } }, 200);
    await call(work, { agent: 'examples/word-count', input: { text: 'The quick brown fox jumps over the lazy dog' } }, 200);
    await call(work, { agent: 'examples/quote-translate', input: { text: 'Thank you for your order', to: 'fr' }, max_cost: '0.50' }, 200);
    for (const text of ['Server maintenance tonight', 'Build passed', 'New invoice received']) await call(work, { agent: 'lena/shout', input: { text } }, 200);
    await call(work, { agent: 'lena/headline', input: { text: 'the art of hiring agents' } }, 200);
    const delegated = await call(
      work,
      { agent: 'examples/invoice-pipeline', input: { text: 'Invoice 42: 3 widgets at 4.00 EUR, due 15 December', to: 'de' } },
      200,
    );
    // Failed: an agent that throws, one past its hard timeout, a published endpoint answering 500.
    await call(work, { agent: 'examples/flaky', input: { mode: 'crash' } }, 502);
    await call(work, { agent: 'examples/slow', input: { ms: 5000 } }, 502);
    await call(work, { agent: 'lena/headline', input: { text: '   ' } }, 502);
    // Denied: a max_cost below the fixed price. Rejected input: not what the interface takes.
    await call(work, { agent: 'examples/echo-upper', input: { text: 'cheap?' }, max_cost: '0.001' }, 403);
    await call(work, { agent: 'examples/word-count', input: { words: ['not', 'a', 'text'] } }, 422);
    // Held for approval: one approved (and run), two pending, one of them with a long input.
    const approved = await call(reviewed, { agent: 'examples/quote-translate', input: { text: 'Meeting moved to Thursday', to: 'es' }, max_cost: '0.20' }, 202);
    await expectStatus('approving a held call', send(url, 'POST', `/v0/approvals/${approved.approval.id}`, { key: alice.human, body: {} }), 200);
    await call(reviewed, { agent: 'examples/invoice-pipeline', input: { text: LONG_INVOICE, to: 'fr' } }, 202);
    await call(reviewed, { agent: 'examples/quote-translate', input: { text: 'Please confirm the delivery date', to: 'de' }, max_cost: '0.30' }, 202);

    // ---- the operator: one account disabled, for the moderation log
    const mallory = await signUp(url, 'mallory');
    await expectStatus(
      'disabling mallory',
      send(url, 'POST', `/v0/admin/accounts/${mallory.handle}/disable`, {
        key: CONSOLE_ADMIN_KEY,
        body: { reason: 'Sign-ups in bulk from a throw-away address' },
      }),
      200,
    );

    // The evaluation of lena/shout runs in this process's evaluator: wait for its result.
    await poll(
      async () => {
        const me = await send(url, 'GET', '/v0/me/agents', { key: lena.human });
        const version = (me.body?.versions as any[] | undefined)?.find((v) => v.agent === 'lena/shout');
        return version && version.evaluation?.status !== 'pending' ? version : undefined;
      },
      { what: 'the evaluation of lena/shout@1.0.0', timeoutMs: 60_000, intervalMs: 200 },
    );

    const created = String(delegated.receipt.created_at ?? new Date().toISOString());
    return {
      url,
      caller: alice,
      author: lena,
      adminKey: CONSOLE_ADMIN_KEY,
      ...(delegated.receipt.children?.length ? { receiptWithChildren: String(delegated.receipt.id) } : {}),
      month: created.slice(0, 7),
      stop,
    };
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
}
