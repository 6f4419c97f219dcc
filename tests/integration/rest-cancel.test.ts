/**
 * `POST /v0/calls/{id}/cancel` by the caller (shared/calls/cancel.ts, the one owner of the rule): a queued call is
 * closed at once, a running one is aborted by its runner (the agent sees it), a finished one is left as it ended;
 * a cancelled call is failed / cancelled and never billed, its hold released; a cancel racing the agent's answer
 * either wins (unbilled) or loses (billed as it ran), and the answer says which the receipt says; idempotent.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { hostedConfig, send, signUp, workMandate, type Account } from '../support/hosted.js';
import { poll } from '../support/poll.js';

async function logOf(file: string, line: string): Promise<string[]> {
  let lines: string[] = [];
  return poll(
    async () => {
      lines = (await readFile(file, 'utf8').catch(() => '')).trim().split('\n');
      return lines.includes(line) ? lines : undefined;
    },
    { what: `${file} to say ${line}`, timeoutMs: 10_000, intervalMs: 20, context: () => `it says: ${lines.join(', ')}` },
  );
}

const runnerFor = (g: TestGateway) => startTestGateway({ beside: g, roles: ['runner'] });

const tempFile = async (name: string) => path.join(await mkdtemp(path.join(tmpdir(), 'holon-rest-cancel-')), name);

async function budget(g: TestGateway, a: Account, mandate: string) {
  return (await send(g.url, 'GET', `/v0/mandates/${mandate}`, { key: a.human })).body.budget;
}

describe('POST /v0/calls/{id}/cancel', () => {
  test('queued: closed at once and unbilled; running: the agent sees the cancellation; idempotent; strangers 404', async () => {
    // No runner at first: a call stays queued until cancelled.
    await useAudited(await startTestGateway({ roles: ['api', 'settler'], config: hostedConfig() }), async (g) => {
      const alice = await signUp(g.url, 'alice');
      const { mandate, agent } = await workMandate(g.url, alice);
      const mallory = await signUp(g.url, 'mallory');
      const submit = (agentId: string, input: unknown) =>
        send(g.url, 'POST', '/v0/calls', { key: agent, headers: { prefer: 'respond-async' }, body: { mandate, agent: agentId, input } });

      const queued = (await submit('examples/echo-upper', { text: 'x' })).body.call.id;
      expect((await send(g.url, 'POST', `/v0/calls/${queued}/cancel`, { key: mallory.sandboxAgent })).status).toBe(404);
      expect((await send(g.url, 'POST', `/v0/calls/${queued}/cancel`, { key: mallory.human })).status).toBe(404);
      expect((await send(g.url, 'POST', '/v0/calls/r_nothing/cancel', { key: agent })).status).toBe(404);
      expect((await send(g.url, 'GET', `/v0/calls/${queued}`, { key: agent })).body.call.status).toBe('queued');

      const first = await send(g.url, 'POST', `/v0/calls/${queued}/cancel`, { key: agent });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({
        cancel: 'cancelled',
        call: { id: queued, status: 'failed' },
        receipt: { id: queued, status: 'failed', error: 'cancelled', billed: false, cost: { total: '0.00' } },
      });
      // Idempotent: a second cancel (here by the human who issued the mandate) answers the same final state.
      const again = await send(g.url, 'POST', `/v0/calls/${queued}/cancel`, { key: alice.human });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(await budget(g, alice, mandate)).toMatchObject({ spent: '0.00', reserved: '0.00' });

      // Running: the runner (another service) aborts the run; the cancel is sent to another API process.
      const runner = await runnerFor(g);
      const other = await startTestGateway({ beside: g, roles: ['api'], hosted: true });
      try {
        const file = await tempFile('patient.log');
        const running = (await submit('fixtures/patient', { file, ms: 20_000 })).body.call.id;
        await logOf(file, 'started');
        const t = Date.now();
        const cancelled = await send(other.url, 'POST', `/v0/calls/${running}/cancel`, { key: agent });
        expect(Date.now() - t).toBeLessThan(5_000);
        expect(cancelled.status).toBe(200);
        expect(cancelled.body).toMatchObject({ cancel: 'cancelled', receipt: { status: 'failed', error: 'cancelled', billed: false } });
        expect(await logOf(file, 'aborted:CancelledError')).toEqual(['started', 'aborted:CancelledError']);

        // Finished before the cancel: too late, it stays as it ran (billed), and its output is still there for GET.
        const done = await send(g.url, 'POST', '/v0/calls', { key: agent, body: { mandate, agent: 'examples/echo-upper', input: { text: 'y' } } });
        expect(done.status).toBe(200);
        const finished = await send(g.url, 'POST', '/v0/calls', {
          key: agent,
          headers: { prefer: 'respond-async' },
          body: { mandate, agent: 'examples/echo-upper', input: { text: 'z' } },
        });
        const fid = finished.body.call.id;
        // Finished (its receipt exists), its output not yet collected.
        await poll(async () => (await send(g.url, 'GET', `/v0/receipts/${fid}`, { key: agent })).status === 200, {
          what: 'the call to finish',
          timeoutMs: 10_000,
          intervalMs: 20,
        });
        const late = await send(g.url, 'POST', `/v0/calls/${fid}/cancel`, { key: agent });
        expect(late.status).toBe(200);
        expect(late.body).toMatchObject({ cancel: 'too_late', call: { status: 'succeeded' }, receipt: { billed: true } });
        expect(late.body.output).toBeUndefined();
        expect((await send(g.url, 'GET', `/v0/calls/${fid}`, { key: agent })).body.output).toEqual({ text: 'Z' });
        expect(await budget(g, alice, mandate)).toMatchObject({ spent: '0.02', reserved: '0.00' });
      } finally {
        await other.stop();
        await runner.stop();
      }
    });
  });

  test('a cancel racing the agent answer never bills a cancelled call nor un-bills a finished one', async () => {
    await useAudited(await startTestGateway({ config: hostedConfig() }), async (g) => {
      const alice = await signUp(g.url, 'alice');
      const { mandate, agent } = await workMandate(g.url, alice);
      // examples/slow answers after `ms`; each cancel is sent around that moment, some before, some after.
      const offsets = [-40, -20, -10, -5, 0, 0, 5, 10, 20, 40];
      const results = await Promise.all(
        offsets.map(async (offset) => {
          const ms = 150;
          const id = (
            await send(g.url, 'POST', '/v0/calls', {
              key: agent,
              headers: { prefer: 'respond-async' },
              body: { mandate, agent: 'examples/slow', input: { ms } },
            })
          ).body.call.id;
          // Running: the agent has its `ms` to go from about now.
          await poll(async () => (await send(g.url, 'GET', `/v0/calls/${id}`, { key: agent })).body.call.status !== 'queued', {
            what: `${id} to run`,
            timeoutMs: 10_000,
            intervalMs: 5,
          });
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, ms + offset)));
          const cancel = await send(g.url, 'POST', `/v0/calls/${id}/cancel`, { key: agent });
          const receipt = (await send(g.url, 'GET', `/v0/calls/${id}?wait=10`, { key: agent })).body.receipt;
          return { cancel: cancel.body, receipt };
        }),
      );
      let spent = 0;
      for (const { cancel, receipt } of results) {
        expect(cancel.receipt, 'the cancel answered the final state').toEqual(receipt);
        if (cancel.cancel === 'cancelled') {
          expect(receipt).toMatchObject({ status: 'failed', error: 'cancelled', billed: false, cost: { total: '0.00' } });
        } else {
          expect(cancel.cancel).toBe('too_late');
          expect(receipt).toMatchObject({ status: 'succeeded', billed: true, cost: { total: '0.02' } });
          spent += 2;
        }
      }
      expect(await budget(g, alice, mandate)).toMatchObject({ spent: `0.${String(spent).padStart(2, '0')}`, reserved: '0.00' });
    });
  });

  test('children already paid stay paid; a pending approval is withdrawn; a delegated call is cancelled with its root', async () => {
    await useAudited(await startTestGateway({ config: hostedConfig() }), async (g) => {
      const alice = await signUp(g.url, 'alice');
      const { mandate, agent } = await workMandate(g.url, alice);
      const file = await tempFile('parent.log');
      const parent = (
        await send(g.url, 'POST', '/v0/calls', {
          key: agent,
          headers: { prefer: 'respond-async' },
          body: { mandate, agent: 'fixtures/patient-parent', input: { file } },
        })
      ).body.call.id;
      await logOf(file, 'child-done');
      const tree = (await send(g.url, 'GET', `/v0/receipts/${parent}`, { key: agent })).body;
      const child = tree.children?.[0]?.id ?? (await g.db.knex('calls').where({ parent_id: parent }).first('id')).id;
      expect((await send(g.url, 'POST', `/v0/calls/${child}/cancel`, { key: agent })).status).toBe(400);
      const cancelled = await send(g.url, 'POST', `/v0/calls/${parent}/cancel`, { key: agent });
      expect(cancelled.body).toMatchObject({ cancel: 'cancelled', receipt: { status: 'failed', error: 'cancelled', billed: false, cost: { own: '0.00' } } });
      expect(cancelled.body.receipt.children).toEqual([
        expect.objectContaining({ id: child, status: 'succeeded', billed: true, cost: expect.objectContaining({ total: '0.01' }) }),
      ]);
      expect(await budget(g, alice, mandate)).toMatchObject({ spent: '0.01', reserved: '0.00' });

      const asking = await workMandate(g.url, alice, { id: 'asking', approval: { above: '0.005' } });
      const held = await send(g.url, 'POST', '/v0/calls', {
        key: asking.agent,
        body: { mandate: asking.mandate, agent: 'examples/echo-upper', input: { text: 'x' } },
      });
      expect(held.status).toBe(202);
      const withdrawn = await send(g.url, 'POST', `/v0/calls/${held.body.receipt.id}/cancel`, { key: asking.agent });
      expect(withdrawn.status).toBe(200);
      expect(withdrawn.body).toMatchObject({
        cancel: 'cancelled',
        call: { status: 'pending_approval' },
        approval: { id: held.body.approval.id, status: 'rejected' },
      });
      // Nobody can run it any more.
      expect((await send(g.url, 'POST', `/v0/approvals/${held.body.approval.id}`, { key: alice.human, body: {} })).status).toBe(409);
      expect((await send(g.url, 'POST', `/v0/calls/${held.body.receipt.id}/cancel`, { key: asking.agent })).body.cancel).toBe('cancelled');
    });
  });
});
