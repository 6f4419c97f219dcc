/**
 * Every receipt a request answers with can be read and proved by whoever received it (docs/receipts.md "Who reads a
 * receipt", DESIGN §3.6–3.8), and by nobody else. Every kind of request that answers with a receipt is driven — a
 * call under a mandate that does not exist, an agent that does not exist, an agent the mandate does not allow, a
 * named approval that is none, a rejected input, a success, a failure, a call held for approval and the approval
 * that runs it — hosted (from a human key and an agent key) and in dev mode (the operator). For each receipt and
 * each principal (and, as a property, for random kinds, senders and names of the missing mandate):
 *  - its receiver reads it at GET /v0/receipts/{id} (the very receipt answered), GET /v0/calls/{id}, and proves it at
 *    /proof (the independent verifier, tests/support/independent-verifier.ts, accepts the proof);
 *  - for every principal, reading, proving and listing (GET /v0/receipts, every page) agree exactly;
 *  - another tenant's read, proof and call read are byte for byte the answers to a random id that names nothing.
 * MCP: every receipt call_agent answers is get_receipt's, and a receipt of the account's human key whose mandate
 * does not exist answers get_receipt like a random id, as it does REST for the agent key.
 * Before receipts of requests naming no existing mandate had an owner, the receipt of a call under an unknown mandate
 * was a 404 to its receiver (hosted and dev), yet listed to the dev operator.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { newApprovalId } from '../../shared/calls/submit/approvals.js';
import { newReceiptId } from '../../shared/calls/ids.js';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { gatewayTest } from '../support/gateway-fixture.js';
import { send, signUp, workMandate, type Reply } from '../support/hosted.js';
import { GENEROUS_RATE_LIMITS, request } from '../support/http.js';
import { verifyReceiptProof, type KeySet } from '../support/independent-verifier.js';

/** Who sends and reads: a hosted key, or (no key) the dev operator. */
interface Principal {
  name: string;
  key?: string;
}

/** A request that answered with a receipt, and who sent it. */
interface Received {
  what: string;
  receiver: Principal;
  receipt: { id: string; mandate: string | null; children: unknown[] };
}

/** One kind of request: what it sends, and the status it must answer with (each answer carries a receipt). */
interface Kind {
  what: string;
  status: number;
  body: Record<string, unknown>;
}

const RATE = GENEROUS_RATE_LIMITS;

/**
 * The kinds of request that answer with a receipt, under `mandate` (the human's ones name it; an agent key's imply
 * it); `missing` names the mandate that does not exist, in the same namespace.
 */
function kinds(mandate: string | undefined, narrow: string, missing = 'no-such-mandate'): Kind[] {
  const under = mandate === undefined ? {} : { mandate };
  return [
    ...(mandate === undefined
      ? []
      : [
          {
            what: 'a mandate that does not exist',
            status: 404,
            body: { mandate: `${mandate.split('/')[0]}/${missing}`, agent: 'examples/echo-upper', input: { text: 'x' } },
          },
        ]),
    { what: 'an agent that does not exist', status: 404, body: { ...under, agent: 'examples/no-such-agent', input: {} } },
    { what: 'a named approval that is none', status: 403, body: { ...under, agent: 'examples/echo-upper', input: { text: 'x' }, approval: newApprovalId() } },
    { what: 'a rejected input', status: 422, body: { ...under, agent: 'examples/echo-upper', input: { wrong: true } } },
    { what: 'a success', status: 200, body: { ...under, agent: 'examples/echo-upper', input: { text: 'x' } } },
    { what: 'a failure', status: 502, body: { ...under, agent: 'examples/flaky', input: { mode: 'crash' } } },
    ...(mandate === undefined
      ? []
      : [{ what: 'an agent the mandate does not allow', status: 403, body: { mandate: narrow, agent: 'examples/word-count', input: { text: 'a b' } } }]),
  ];
}

/** The allow-list of the mandate `narrow`: one agent, so that any other is denied. */
const NARROW = { allow: { agents: ['examples/echo-upper'], capabilities: [] } };
const ASK = { approval: { above: '0.005' } };

async function sendAs(base: string, p: Principal, method: string, path: string, body?: unknown): Promise<Reply> {
  return send(base, method, path, { ...(p.key ? { key: p.key } : {}), ...(body === undefined ? {} : { body }) });
}

/** Drive every kind of request as `p`; each answer's receipt, with who received it. */
async function drive(base: string, p: Principal, mandate: string | undefined, narrow: string, ask: string): Promise<Received[]> {
  const got: Received[] = [];
  for (const k of kinds(mandate, narrow)) {
    const r = await sendAs(base, p, 'POST', '/v0/calls', k.body);
    expect(r.status, `${k.what} as ${p.name}: ${JSON.stringify(r.body)}`).toBe(k.status);
    expect(r.body.receipt?.id, `${k.what} as ${p.name} answers a receipt`).toMatch(/^r_/);
    got.push({ what: k.what, receiver: p, receipt: r.body.receipt });
  }
  if (mandate !== undefined) {
    const held = await sendAs(base, p, 'POST', '/v0/calls', { mandate: ask, agent: 'examples/echo-upper', input: { text: 'ask' } });
    expect(held.status, JSON.stringify(held.body)).toBe(202);
    got.push({ what: 'a call held for approval', receiver: p, receipt: held.body.receipt });
    const ran = await sendAs(base, p, 'POST', `/v0/approvals/${held.body.approval.id}`, {});
    expect(ran.status, JSON.stringify(ran.body)).toBe(200);
    got.push({ what: 'the approved call', receiver: p, receipt: ran.body.receipt });
  }
  return got;
}

/** Every top-level receipt id `p` lists, all pages. */
async function listed(base: string, p: Principal): Promise<Set<string>> {
  const ids = new Set<string>();
  let before: string | undefined;
  do {
    const page = await sendAs(base, p, 'GET', `/v0/receipts?limit=200${before ? `&before=${before}` : ''}`);
    expect(page.status).toBe(200);
    for (const r of page.body.receipts) ids.add(r.id);
    before = page.body.next;
  } while (before);
  return ids;
}

/** An answer as text, the id asked for replaced: what "the same answer" compares. */
async function answerText(base: string, p: Principal, path: (id: string) => string, id: string): Promise<{ status: number; text: string }> {
  const res = await request(base, 'GET', path(id), p.key ? { key: p.key } : {});
  return { status: res.status, text: (await res.text()).split(id).join('<id>') };
}

const READS: Array<[string, (id: string) => string]> = [
  ['GET /v0/receipts/{id}', (id) => `/v0/receipts/${id}`],
  ['GET /v0/receipts/{id}/proof', (id) => `/v0/receipts/${id}/proof`],
  ['GET /v0/calls/{id}', (id) => `/v0/calls/${id}`],
];

async function keySetOf(base: string): Promise<KeySet> {
  return (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as KeySet;
}

/**
 * The receiver reads, proves (independently verified) and reads the call of each receipt; for every principal,
 * reading, proving and listing agree; `strangers` (another tenant) get a random id's answer, byte for byte.
 */
async function checkHolders(base: string, received: Received[], everyone: Principal[], strangers: Principal[]): Promise<string[]> {
  const problems: string[] = [];
  const keySet = await keySetOf(base);
  for (const { what, receiver, receipt } of received) {
    const read = await sendAs(base, receiver, 'GET', `/v0/receipts/${receipt.id}`);
    if (read.status !== 200) problems.push(`${what}: ${receiver.name} cannot read its receipt (${read.status} ${JSON.stringify(read.body)})`);
    else expect(read.body, `${what}: the receipt read is the one answered`).toEqual(receipt);
    const proof = await sendAs(base, receiver, 'GET', `/v0/receipts/${receipt.id}/proof`);
    if (proof.status !== 200) problems.push(`${what}: ${receiver.name} cannot prove its receipt (${proof.status} ${JSON.stringify(proof.body)})`);
    else {
      const verdict = await verifyReceiptProof({ receipt, proof: proof.body, keySet });
      if (!verdict.ok) problems.push(`${what}: the proof does not verify (${JSON.stringify(verdict)})`);
    }
    const call = await sendAs(base, receiver, 'GET', `/v0/calls/${receipt.id}`);
    if (call.status !== 200) problems.push(`${what}: ${receiver.name} cannot read its call (${call.status} ${JSON.stringify(call.body)})`);
    else expect(call.body.receipt, `${what}: the call's receipt is the one answered`).toEqual(receipt);
  }
  for (const p of everyone) {
    const lists = await listed(base, p);
    for (const { what, receiver, receipt } of received) {
      const read = (await sendAs(base, p, 'GET', `/v0/receipts/${receipt.id}`)).status;
      const proof = (await sendAs(base, p, 'GET', `/v0/receipts/${receipt.id}/proof`)).status;
      const verdicts = `read ${read}, proof ${proof}, ${lists.has(receipt.id) ? 'listed' : 'not listed'}`;
      if (!((read === 200 && proof === 200 && lists.has(receipt.id)) || (read === 404 && proof === 404 && !lists.has(receipt.id)))) {
        problems.push(`${what} (${receiver.name}'s) as ${p.name}: ${verdicts}`);
      }
      if (p === receiver && read !== 200) problems.push(`${what}: its receiver ${p.name} does not see it (${verdicts})`);
    }
  }
  for (const p of strangers) {
    for (const { what, receipt } of received) {
      const random = newReceiptId();
      for (const [route, path] of READS) {
        const real = await answerText(base, p, path, receipt.id);
        const none = await answerText(base, p, path, random);
        if (real.status !== 404 || JSON.stringify(real) !== JSON.stringify(none)) {
          problems.push(`${route} of ${what} as ${p.name}: ${JSON.stringify(real)} but a random id: ${JSON.stringify(none)}`);
        }
      }
    }
  }
  return problems;
}

describe('every receipt a request answers is readable and provable by whoever received it', () => {
  test('hosted: a human key and an agent key read and prove every receipt they were answered; another tenant gets 404', async () => {
    await useAudited(await startTestGateway({ hosted: true, config: RATE }), async (g) => {
      const alice = await signUp(g.url, 'alice');
      const bob = await signUp(g.url, 'bob');
      const work = await workMandate(g.url, alice);
      const bobWork = await workMandate(g.url, bob);
      for (const [id, doc] of [
        ['narrow', NARROW],
        ['ask', ASK],
      ] as const) {
        const m = await send(g.url, 'POST', '/v0/mandates', {
          key: alice.human,
          body: { id, grantee: 'alice/assistant', allow: { agents: ['examples/*'], capabilities: [] }, budget: { total: '1.00' }, ...doc },
        });
        expect(m.status, JSON.stringify(m.body)).toBe(201);
      }
      const human: Principal = { name: "alice's human key", key: alice.human };
      const agent: Principal = { name: "alice's agent key (alice/work)", key: work.agent };
      const strangers: Principal[] = [
        { name: "bob's human key", key: bob.human },
        { name: "bob's agent key", key: bobWork.agent },
      ];
      const received = [
        ...(await drive(g.url, human, work.mandate, 'alice/narrow', 'alice/ask')),
        ...(await drive(g.url, agent, undefined, 'alice/narrow', 'alice/ask')),
      ];
      expect(received.filter((r) => r.receipt.mandate === null).map((r) => r.what)).toEqual(['a mandate that does not exist']);
      expect(await checkHolders(g.url, received, [human, agent, ...strangers], strangers)).toEqual([]);

      // The rule, as each principal sees alice's receipts: the human all of them (its mandates', and its request that
      // named none that exists); the agent key its mandate's only.
      const humanLists = await listed(g.url, human);
      const agentLists = await listed(g.url, agent);
      for (const { what, receipt } of received) {
        expect(humanLists.has(receipt.id), `${what}: listed to alice's human key`).toBe(true);
        expect(agentLists.has(receipt.id), `${what}: listed to alice's agent key`).toBe(receipt.mandate === 'alice/work');
      }

      // A property over the kinds: any kind, from either key, any name for a mandate that does not exist.
      const taken = new Set(['work', 'narrow', 'ask', 'sandbox']);
      await fc.assert(
        fc.asyncProperty(
          fc.boolean(),
          fc.nat(),
          fc.stringMatching(/^[a-z][a-z0-9-]{0,40}$/).filter((n) => !taken.has(n)),
          async (byHuman, pick, missing) => {
            const sender = byHuman ? human : agent;
            const all = kinds(byHuman ? work.mandate : undefined, 'alice/narrow', missing);
            const k = all[pick % all.length]!;
            const r = await sendAs(g.url, sender, 'POST', '/v0/calls', k.body);
            expect(r.status, `${k.what} as ${sender.name}: ${JSON.stringify(r.body)}`).toBe(k.status);
            const one: Received = { what: `${k.what} (${JSON.stringify(k.body)})`, receiver: sender, receipt: r.body.receipt };
            expect(await checkHolders(g.url, [one], [human, agent, ...strangers], strangers)).toEqual([]);
          },
        ),
        { numRuns: 10, seed: 20261204 },
      );

      // MCP: call_agent's receipts are get_receipt's (and REST's); the human's unknown-mandate receipt is, for the
      // agent key's session, like a random id — as it is through REST for that key.
      const client = new Client({ name: 'receipt-holders-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${work.agent}` } } }));
      try {
        const structured = (r: unknown) => (r as { structuredContent: any }).structuredContent;
        for (const args of [
          { agent: 'examples/echo-upper', input: { text: 'mcp' } },
          { agent: 'examples/echo-upper', input: { wrong: true } },
          { agent: 'examples/no-such-agent', input: {} },
          { agent: 'examples/flaky', input: { mode: 'crash' } },
        ]) {
          const answered = structured(await client.callTool({ name: 'call_agent', arguments: args })).receipt;
          expect(answered?.id, JSON.stringify(args)).toMatch(/^r_/);
          expect(structured(await client.callTool({ name: 'get_receipt', arguments: { id: answered.id } }))).toEqual(answered);
          expect((await sendAs(g.url, agent, 'GET', `/v0/receipts/${answered.id}`)).body).toEqual(answered);
        }
        const orphan = received.find((r) => r.receipt.mandate === null)!.receipt.id;
        const random = newReceiptId();
        const asked = async (id: string) =>
          JSON.stringify(await client.callTool({ name: 'get_receipt', arguments: { id } }))
            .split(id)
            .join('<id>');
        expect(await asked(orphan)).toBe(await asked(random));
        expect(await asked(orphan)).toContain('not_found');
      } finally {
        await client.close();
      }
    });
  }, 180_000);

  gatewayTest('dev: the operator reads, proves and lists every receipt it was answered, one under no mandate too', async ({ gateway: g }) => {
    await g.mandate({});
    await g.mandate({ id: 'alice/narrow', ...NARROW });
    await g.mandate({ id: 'alice/ask', ...ASK });
    const operator: Principal = { name: 'the operator' };
    const received = await drive(g.url, operator, 'alice/test', 'alice/narrow', 'alice/ask');
    expect(received.filter((r) => r.receipt.mandate === null).map((r) => r.what)).toEqual(['a mandate that does not exist']);
    expect(await checkHolders(g.url, received, [operator], [])).toEqual([]);
  });
});
