/**
 * A hosted caller of published agents and what routing does for it: `callByName` makes `times` normal, billed calls
 * of one agent (each checked billed to the caller), `routing` answers which agent a capability search ranks first and
 * which one a capability call reaches (`text.echo`), for the tests of who moves a ranking (self-dealing, sign-up payers).
 */
import { expect } from 'vitest';
import { send, type Account } from './http.js';

export interface Caller {
  account: Account;
  mandate: string;
  key: string;
}

export async function callByName(url: string, who: Caller, agent: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const r = await send<{ receipt: { billed: boolean; payer: string } }>(url, 'POST', '/v0/calls', { key: who.key, body: { agent, input: { i } } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // A normal, billed call with its receipt: only its place in the ranking differs.
    expect(r.body.receipt).toMatchObject({ billed: true, payer: who.account.handle });
  }
}

export async function routing(url: string, who: Caller): Promise<{ ranked: string[]; reached: string }> {
  const search = await send<{ agents: Array<{ id: string }> }>(url, 'GET', `/v0/agents?capability=text.echo&mandate=${who.mandate}`, { key: who.key });
  expect(search.status, JSON.stringify(search.body)).toBe(200);
  const call = await send<{ receipt: { agent: string } }>(url, 'POST', '/v0/calls', { key: who.key, body: { capability: 'text.echo', input: {} } });
  expect(call.status, JSON.stringify(call.body)).toBe(200);
  return { ranked: search.body.agents.map((a) => a.id), reached: call.body.receipt.agent };
}
