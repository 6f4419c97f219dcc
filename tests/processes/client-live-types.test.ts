/**
 * What an integrator does with the document: generate types from the LIVE GET /v0/openapi.json of a running hosted
 * gateway (openapi-typescript's programmatic API, the options of scripts/client-types.ts), write them beside a small
 * program on openapi-fetch, and type-check it with the project's TypeScript, strict. The program makes a paid call
 * and reads `receipt.cost.own`, `receipt.splits[0].amount`, `receipt.children` and a receipts page's `next` with no
 * cast — so the document must say exactly what the answers hold. Then it runs, against the same gateway.
 */
import { expect, test } from 'vitest';
import type { OpenAPI3 } from 'openapi-typescript';
import { hostedDocument, typesOf } from '../../scripts/client-types.js';
import { clientProject, typeErrors } from '../support/client-project.js';
import { startTestGateway, useAudited } from '../support/gateway.js';
import { send, signUp, workMandate } from '../support/hosted.js';

/** The integrator's program: no `as`, no `any`, no `!`; what is optional in the answers is checked at run time. */
const PROGRAM = `import createClient from 'openapi-fetch';
import type { paths } from './openapi.js';

const client = createClient<paths>({ baseUrl: process.env.HOLON_URL, headers: { authorization: \`Bearer \${process.env.HOLON_KEY}\` } });

// A paid call (synchronous: 200 with the output and the receipt).
const call = await client.POST('/v0/calls', { body: { agent: 'examples/echo-upper', input: { text: 'typed' } } });
if (call.error) throw new Error(\`refused: \${call.error.error?.code}\`);
if (call.data.status !== 'succeeded') throw new Error('answered without a success (202: held, or still on its way)');
const output: unknown = call.data.output;
const receipt = call.data.receipt;
const own: string = receipt.cost.own;
const split: string = receipt.splits[0].amount;
const children: number = receipt.children.length;
const firstChildTotal: string | undefined = receipt.children[0]?.cost.total;
const status: 'succeeded' | 'failed' | 'denied' | 'rejected_input' | 'pending_approval' = receipt.status;

// A page of receipts, and the next one through \`next\`.
const page = await client.GET('/v0/receipts', { params: { query: { limit: 1 } } });
if (page.error) throw new Error(\`refused: \${page.error.error.code}\`);
const next: string | undefined = page.data.next;
const older = next === undefined ? [] : ((await client.GET('/v0/receipts', { params: { query: { before: next } } })).data?.receipts ?? []);
const ids: string[] = [...page.data.receipts, ...older].map((r) => r.id);

console.log(JSON.stringify({ output, own, split, children, firstChildTotal: firstChildTotal ?? null, status, next: next ?? null, ids }));
`;

test('types generated from the live document type-check a program that reads a paid call’s receipt and pages receipts, strict, no cast', async () => {
  await useAudited(await startTestGateway({ hosted: true }), async (g) => {
    const alice = await signUp(g.url, 'alice');
    const work = await workMandate(g.url, alice);
    // One receipt before the program's own call, so its page of one has a `next`.
    expect((await send(g.url, 'POST', '/v0/calls', { key: work.agent, body: { agent: 'examples/echo-upper', input: { text: 'first' } } })).status).toBe(200);

    const live = (await send(g.url, 'GET', '/v0/openapi.json')).body as OpenAPI3;
    const types = await typesOf(live);
    // The committed client/openapi.d.ts is generated in-process (tests/unit/client-types.test.ts); it is the same document.
    expect(types).toBe(await typesOf(hostedDocument()));

    const project = await clientProject(['openapi-fetch']);
    try {
      await project.write('openapi.d.ts', types);
      const program = await project.write('program.ts', PROGRAM);
      expect(PROGRAM).not.toMatch(/\bas\b|\bany\b|!\./);
      expect(typeErrors([program])).toEqual([]);

      const r = await project.node(program, { tsx: true, env: { HOLON_URL: g.url, HOLON_KEY: work.agent } });
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({
        output: { text: 'TYPED' },
        own: '0.01',
        children: 0,
        firstChildTotal: null,
        status: 'succeeded',
        next: expect.stringMatching(/^r_/),
      });
      expect(Number(out.split)).toBeGreaterThan(0);
      expect(out.ids).toHaveLength(2);
    } finally {
      await project.remove();
    }
  });
});

test('the check has teeth: a program reading what a receipt does not have fails to type-check', async () => {
  const project = await clientProject(['openapi-fetch']);
  try {
    await project.write('openapi.d.ts', await typesOf(hostedDocument()));
    const wrong = await project.write(
      'wrong.ts',
      PROGRAM.replace('receipt.cost.own', 'receipt.cost.mine').replace('{ limit: 1 }', "{ limit: '1' }").replace('page.data.next', 'page.data.cursor'),
    );
    const errors = typeErrors([wrong]).join('\n');
    expect(errors).toMatch(/Property 'mine' does not exist/);
    expect(errors).toMatch(/Type 'string' is not assignable to type 'number'/);
    expect(errors).toMatch(/Property 'cursor' does not exist/);
  } finally {
    await project.remove();
  }
});
