/**
 * The gateway as an A2A server (services/api/a2a/), driven by `@a2a-js/sdk`'s own client: signed, priced cards
 * (verified with the SDK's `verifyAgentCardSignature` against /.well-known/jwks.json), paid calls over JSON-RPC and
 * HTTP+JSON with their receipts, a streamed call's chunks as artifact updates, an agent's question answered on its
 * task, a held call (input-required until a human decides), a cancelled task, and the tasks of another key refused as
 * missing ones. Whole gateways on real Postgres and Redis; the ledger audit runs after each test.
 */
import { StreamResponse, TaskState, verifyAgentCardSignature } from '@a2a-js/sdk';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret } from '../../shared/webhooks/secrets.js';
import { perTestCleanups } from '../support/cleanups.js';
import { poll } from '../support/poll.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { testWebhookSettings } from '../support/webhook-settings.js';
import { createLocalJWKSet } from 'jose';
import { describe, expect, test as base } from 'vitest';
import { a2aClient, dataMessage } from '../support/a2a-clients.js';
import { startTestGateway, useAudited, type TestGateway } from '../support/gateway.js';
import { send, signUp, workMandate } from '../support/hosted.js';

const test = base.extend<{ gateway: TestGateway }>({
  // eslint-disable-next-line no-empty-pattern
  gateway: async ({}, use) => useAudited(await startTestGateway({ config: { mcpMandate: 'alice/test' } }), use),
});

const receiptOf = (meta: Record<string, unknown> | undefined) =>
  meta?.['holon/receipt'] as { id: string; status: string; billed: boolean; cost: { total: string }; signature: string };

async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

describe('A2A cards', () => {
  test('each listed agent and the gateway have a signed card with Holon’s pricing extension', async ({ gateway: g }) => {
    const res = await fetch(`${g.url}/a2a/examples/echo-upper/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    const card = (await res.json()) as any;
    expect(card.supportedInterfaces).toEqual([
      { url: `${g.url}/a2a/examples/echo-upper`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: `${g.url}/a2a/examples/echo-upper`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    ]);
    const pricing = card.capabilities.extensions.find((e: any) => e.uri === 'https://holon.dev/a2a/extensions/pricing/v1');
    expect(pricing.params).toMatchObject({ pricing_model: 'per_run', price: '0.01', currency: 'EUR', worst_case: '0.01' });
    expect(card.securitySchemes.holon_key.httpAuthSecurityScheme.scheme).toBe('Bearer');
    const jwks = (await (await fetch(`${g.url}/.well-known/jwks.json`)).json()) as any;
    const keys = createLocalJWKSet(jwks);
    const verify = verifyAgentCardSignature(async (kid) => (await keys({ alg: 'EdDSA', kid }, undefined as never)) as never);
    await verify(card);
    await expect(verify({ ...card, description: 'forged' })).rejects.toThrow();
    const gw = (await (await fetch(`${g.url}/.well-known/agent-card.json`)).json()) as any;
    await verify(gw);
    expect(gw.skills.map((s: any) => s.id)).toContain('text.transform');
    expect((await fetch(`${g.url}/a2a/nobody/none/.well-known/agent-card.json`)).status).toBe(404);
  });
});

describe('A2A calls through the SDK client', () => {
  test('a paid call over JSON-RPC and over HTTP+JSON: completed with the output and a signed receipt', async ({ gateway: g }) => {
    await g.mandate({});
    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      const client = await a2aClient(`${g.url}/a2a/examples/echo-upper/.well-known/agent-card.json`, { binding });
      const task = (await client.sendMessage({ message: dataMessage({ text: 'hi' }) } as never)) as any;
      expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(task.artifacts[0].parts[0].content).toEqual({ $case: 'data', value: { text: 'HI' } });
      const receipt = receiptOf(task.metadata);
      expect(receipt).toMatchObject({ id: task.id, status: 'succeeded', billed: true, cost: { total: '0.01' } });
      expect(receipt.signature).toMatch(/^ey/);
      const again = (await client.getTask({ id: task.id } as never)) as any;
      expect(again.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    }
    const receipts = (await g.get<any>('/v0/receipts')).body;
    expect(receipts.receipts.length).toBe(2);
  });

  test('a streamed call: chunks as artifact updates with holon/units, then the output and the final status with the receipt', async ({ gateway: g }) => {
    await g.mandate({});
    const client = await a2aClient(`${g.url}/a2a/fixtures/streamer/.well-known/agent-card.json`);
    const events = await collect(client.sendMessageStream({ message: dataMessage({ n: 3 }) } as never) as never);
    const chunks = events.filter((e) => e.payload?.$case === 'artifactUpdate' && (e.payload.value as any).artifact.artifactId === 'chunks');
    expect(chunks.map((e) => (e.payload!.value as any).metadata['holon/units'])).toEqual(['1', '2', '3']);
    expect(chunks.map((e) => (e.payload!.value as any).artifact.parts[0].content.value)).toEqual([{ text: 'part 0' }, { text: 'part 1' }, { text: 'part 2' }]);
    const last = events[events.length - 1]!.payload!.value as any;
    expect(last.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(receiptOf(last.metadata)).toMatchObject({ status: 'succeeded', cost: { total: '0.03' } });
  });

  test('SubscribeToTask follows a running task to its end from another API process', async ({ gateway: g }) => {
    await g.mandate({});
    const other = await startTestGateway({ beside: g, roles: ['api'], config: { mcpMandate: 'alice/test' } });
    try {
      const client = await a2aClient(`${g.url}/a2a/fixtures/streamer/.well-known/agent-card.json`);
      const task = (await client.sendMessage({ message: dataMessage({ n: 3, gap_ms: 150 }), configuration: { returnImmediately: true } } as never)) as any;
      const elsewhere = await a2aClient(`${other.url}/a2a/fixtures/streamer/.well-known/agent-card.json`);
      const events = await collect(elsewhere.resubscribeTask({ id: task.id } as never) as never);
      const last = events[events.length - 1]!.payload!.value as any;
      expect(last.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(receiptOf(last.metadata)).toMatchObject({ id: task.id, status: 'succeeded', cost: { total: '0.03' } });
      const chunks = events.filter((e) => e.payload?.$case === 'artifactUpdate' && (e.payload.value as any).artifact.artifactId === 'chunks');
      expect(chunks.length).toBeGreaterThan(0);
      expect(chunks.length).toBeLessThanOrEqual(3);
    } finally {
      await other.stop();
    }
  });

  test('an agent’s question: input-required with its schema, answered by a message on the task', async ({ gateway: g }) => {
    await g.mandate({});
    const client = await a2aClient(`${g.url}/a2a/fixtures/asker/.well-known/agent-card.json`);
    const asked = (await client.sendMessage({ message: dataMessage({}) } as never)) as any;
    expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(asked.status.message.parts[0].content.value).toBe('What is name 1?');
    await expect(client.sendMessage({ message: dataMessage({ name: 3 }, { taskId: asked.id }) } as never)).rejects.toThrow();
    const done = (await client.sendMessage({ message: dataMessage({ name: 'Ada' }, { taskId: asked.id }) } as never)) as any;
    expect(done.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts[0].parts[0].content.value).toEqual({ greeting: 'hello Ada' });
  });

  test('ListTasks pages newest first with the total, and keeps the context a message named', async ({ gateway: g }) => {
    await g.mandate({});
    const client = await a2aClient(`${g.url}/a2a/examples/echo-upper/.well-known/agent-card.json`);
    const ids: string[] = [];
    for (const [i, contextId] of ['', 'ctx-a', ''].entries()) {
      const t = (await client.sendMessage({ message: dataMessage({ text: `n${i}` }, contextId ? { contextId } : {}) } as never)) as any;
      ids.push(t.id);
      if (contextId) expect(t.contextId).toBe(contextId);
    }
    const first = (await client.listTasks({ pageSize: 2 } as never)) as any;
    expect(first.tasks.map((t: any) => t.id)).toEqual([ids[2], ids[1]]);
    expect(first.totalSize).toBe(3);
    const second = (await client.listTasks({ pageSize: 2, pageToken: first.nextPageToken } as never)) as any;
    expect(second.tasks.map((t: any) => t.id)).toEqual([ids[0]]);
    expect(second.nextPageToken).toBe('');
    const inContext = (await client.listTasks({ contextId: 'ctx-a' } as never)) as any;
    expect(inContext.tasks.map((t: any) => [t.id, t.contextId])).toEqual([[ids[1], 'ctx-a']]);
    expect(((await client.getTask({ id: ids[1] } as never)) as any).contextId).toBe('ctx-a');
  });

  test('a cancelled task is canceled and unbilled', async ({ gateway: g }) => {
    await g.mandate({});
    const client = await a2aClient(`${g.url}/a2a/fixtures/patient/.well-known/agent-card.json`);
    const task = (await client.sendMessage({
      message: dataMessage({ file: '/dev/null', ms: 20_000 }),
      configuration: { returnImmediately: true },
    } as never)) as any;
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(task.status.state);
    const cancelled = (await client.cancelTask({ id: task.id } as never)) as any;
    expect(cancelled.status.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(receiptOf(cancelled.metadata)).toMatchObject({ billed: false });
  });
});

const hosted = base.extend<{ gateway: TestGateway }>({
  // eslint-disable-next-line no-empty-pattern
  gateway: async ({}, use) => useAudited(await startTestGateway({ hosted: true }), use),
});

describe('A2A on a hosted gateway', () => {
  hosted('tasks are the key’s own: another tenant’s task is the same answer as a missing one; no key is a 401', async ({ gateway: g }) => {
    const alice = await signUp(g.url, 'alice');
    const bob = await signUp(g.url, 'bob');
    const a = await workMandate(g.url, alice);
    const b = await workMandate(g.url, bob);
    const card = `${g.url}/a2a/examples/echo-upper/.well-known/agent-card.json`;
    const asAlice = await a2aClient(card, { key: a.agent });
    const task = (await asAlice.sendMessage({ message: dataMessage({ text: 'mine' }) } as never)) as any;
    expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      const asBob = await a2aClient(card, { key: b.agent, binding });
      const theirs = await asBob.getTask({ id: task.id } as never).catch((e: Error) => e);
      const missing = await asBob.getTask({ id: 'r_nothing_here' } as never).catch((e: Error) => e);
      expect(theirs).toBeInstanceOf(Error);
      expect((theirs as Error).message).toBe((missing as Error).message.replace('r_nothing_here', task.id));
      expect(await asBob.cancelTask({ id: task.id } as never).catch((e: Error) => e.name)).toBe((missing as Error).name);
      const listed = (await asBob.listTasks({} as never)) as any;
      expect(listed.tasks).toEqual([]);
    }
    const mine = (await asAlice.listTasks({ includeArtifacts: true } as never)) as any;
    expect(mine.tasks.map((t: any) => t.id)).toEqual([task.id]);
    const keyless = await fetch(`${g.url}/a2a/examples/echo-upper`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} }),
    });
    expect(keyless.status).toBe(401);
    expect(keyless.headers.get('www-authenticate')).toMatch(/^Bearer /);
  });

  hosted('a held call is input-required with the approval; the agent key cannot decide it, the human can; then it runs on the task', async ({ gateway: g }) => {
    const alice = await signUp(g.url, 'alice');
    const a = await workMandate(g.url, alice, { approval: { above: '0.00' } });
    const client = await a2aClient(`${g.url}/a2a/examples/echo-upper/.well-known/agent-card.json`, { key: a.agent });
    const held = (await client.sendMessage({ message: dataMessage({ text: 'please' }) } as never)) as any;
    expect(held.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const approval = held.metadata['holon/approval'];
    expect(approval.status).toBe('pending');
    // The agent key's message on the task does not decide anything.
    await expect(client.sendMessage({ message: dataMessage({ text: 'please' }, { taskId: held.id }) } as never)).rejects.toThrow(/not waiting/);
    expect((await send(g.url, 'POST', `/v0/approvals/${approval.id}`, { key: a.agent, body: { run: false } })).status).toBe(403);
    expect((await send(g.url, 'POST', `/v0/approvals/${approval.id}`, { key: alice.human, body: { run: false } })).status).toBe(200);
    const granted = (await client.getTask({ id: held.id } as never)) as any;
    expect(granted.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const ran = (await client.sendMessage({ message: dataMessage({ text: 'please' }, { taskId: held.id }) } as never)) as any;
    expect(ran.id).toBe(held.id);
    expect(ran.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(ran.artifacts[0].parts[0].content.value).toEqual({ text: 'PLEASE' });
    expect(receiptOf(ran.metadata)).toMatchObject({ status: 'succeeded', billed: true });
  });

  hosted('refusals are rejected tasks with their receipt; bad messages are declared errors, never a 5xx', async ({ gateway: g }) => {
    const alice = await signUp(g.url, 'alice');
    const a = await workMandate(g.url, alice, { budget: { total: '0.005' } });
    const client = await a2aClient(`${g.url}/a2a/examples/echo-upper/.well-known/agent-card.json`, { key: a.agent });
    const refused = (await client.sendMessage({ message: dataMessage({ text: 'too dear' }) } as never)) as any;
    expect(refused.status.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(receiptOf(refused.metadata)).toMatchObject({ status: 'denied', billed: false });
    const wide = await workMandate(g.url, alice, { id: 'wide' });
    const wideClient = await a2aClient(`${g.url}/a2a/examples/echo-upper/.well-known/agent-card.json`, { key: wide.agent });
    const wrong = (await wideClient.sendMessage({ message: dataMessage({ nope: 1 }) } as never)) as any;
    expect(wrong.status.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(receiptOf(wrong.metadata)).toMatchObject({ status: 'rejected_input', billed: false });
    const raw = (body: string) =>
      fetch(`${g.url}/a2a/examples/echo-upper`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${a.agent}`, 'a2a-version': '1.0' },
        body,
      });
    for (const body of [
      '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"x","role":"ROLE_USER","parts":[]}}}',
      '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"x","role":"ROLE_USER","parts":[{"text":"not json"}]}}}',
      '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"x","role":"ROLE_USER","parts":[{"data":{}}]},"metadata":{"holon/max_cost":"lots"}}}',
      '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"r_\u0000"}}',
      '{"jsonrpc":"2.0","id":1,"method":"NoSuchMethod","params":{}}',
      '[1,2,3]',
    ]) {
      const r = await raw(body);
      expect(r.status).toBeLessThan(500);
      const answer = (await r.json()) as any;
      expect(answer.error?.code ?? answer.status).toBeDefined();
      if (answer.error) expect(answer.error.code, `${body} → ${JSON.stringify(answer.error)}`).not.toBe(-32603);
    }
  });
});

describe('the gateway’s own A2A interfaces', () => {
  test('a capability named in the metadata is routed like a capability call', async ({ gateway: g }) => {
    await g.mandate({});
    const client = await a2aClient(`${g.url}/.well-known/agent-card.json`);
    const task = (await client.sendMessage({ message: dataMessage({ n: 2 }, { metadata: { 'holon/capability': 'test.stream' } }) } as never)) as any;
    expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(receiptOf(task.metadata)).toMatchObject({ status: 'succeeded' });
    await expect(client.sendMessage({ message: dataMessage({ n: 2 }) } as never)).rejects.toThrow(/holon\/capability/);
  });
});

const { defer } = perTestCleanups();
const FILE_SECRET = 'a file secret for the push tokens of this test, long enough';

describe('A2A push notifications (the webhook machinery, in A2A’s push format)', () => {
  test('a push config on the message: the final task, its token, signed; a question pushed as input-required', async () => {
    const secret = generateWebhookSecret();
    const { url: hook, received } = await startReceiver(defer);
    await useAudited(
      await startTestGateway({ config: { mcpMandate: 'alice/test', fileSecret: FILE_SECRET, webhooks: testWebhookSettings({ devSecret: secret }) } }),
      async (g) => {
        await g.mandate({});
        const client = await a2aClient(`${g.url}/a2a/examples/echo-upper/.well-known/agent-card.json`);
        const card = (await (await fetch(`${g.url}/a2a/examples/echo-upper/.well-known/agent-card.json`)).json()) as any;
        expect(card.capabilities.pushNotifications).toBe(true);
        const task = (await client.sendMessage({
          message: dataMessage({ text: 'push me' }),
          configuration: { returnImmediately: true, taskPushNotificationConfig: { id: 'p1', url: hook, token: 'tok-123' } },
        } as never)) as any;
        const pushed = await poll(async () => received.find((r) => JSON.parse(r.body).task?.status?.state === 'TASK_STATE_COMPLETED'), {
          what: 'the completed task pushed',
          timeoutMs: 15_000,
        });
        expect(pushed.headers['x-a2a-notification-token']).toBe('tok-123');
        expect(pushed.headers['content-type']).toBe('application/a2a+json');
        new Webhook(secret).verify(pushed.body, pushed.headers as Record<string, string>);
        const parsed = StreamResponse.fromJSON(JSON.parse(pushed.body));
        expect(parsed.payload?.$case).toBe('task');
        const value = parsed.payload!.value as any;
        expect(value.id).toBe(task.id);
        expect(value.artifacts[0].parts[0].content.value).toEqual({ text: 'PUSH ME' });
        expect(value.metadata['holon/receipt']).toMatchObject({ id: task.id, status: 'succeeded', billed: true });
        // The config reads back without its token.
        const got = (await client.getTaskPushNotificationConfig({ taskId: task.id, id: 'p1' } as never)) as any;
        expect(got).toMatchObject({ id: 'p1', url: hook, token: '' });
        expect(received.filter((r) => JSON.parse(r.body).task?.id === task.id)).toHaveLength(1);

        const asker = await a2aClient(`${g.url}/a2a/fixtures/asker/.well-known/agent-card.json`);
        const asking = (await asker.sendMessage({
          message: dataMessage({}),
          configuration: { returnImmediately: true, taskPushNotificationConfig: { url: hook, token: 'tok-456' } },
        } as never)) as any;
        const question = await poll(async () => received.find((r) => JSON.parse(r.body).statusUpdate?.taskId === asking.id), {
          what: 'the question pushed',
          timeoutMs: 15_000,
        });
        const update = JSON.parse(question.body).statusUpdate;
        expect(update.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
        expect(update.status.message.parts[0].text).toBe('What is name 1?');
        expect(question.headers['x-a2a-notification-token']).toBe('tok-456');
        await asker.sendMessage({ message: dataMessage({ name: 'Ada' }, { taskId: asking.id }) } as never);
        await poll(async () => received.find((r) => JSON.parse(r.body).task?.id === asking.id), { what: 'the answered task pushed', timeoutMs: 15_000 });
      },
    );
  });

  test('a config set on a running task, listed, replaced only by its own id, deleted; another tenant’s is a missing one', async () => {
    const { url: hook, received } = await startReceiver(defer);
    await useAudited(await startTestGateway({ hosted: true, config: { fileSecret: FILE_SECRET, allowPrivateEndpoints: true } }), async (g) => {
      const alice = await signUp(g.url, 'alice');
      const bob = await signUp(g.url, 'bob');
      const a = await workMandate(g.url, alice);
      const b = await workMandate(g.url, bob);
      const card = `${g.url}/a2a/fixtures/patient/.well-known/agent-card.json`;
      const client = await a2aClient(card, { key: a.agent });
      const running = (await client.sendMessage({
        message: dataMessage({ file: '/dev/null', ms: 1500 }),
        configuration: { returnImmediately: true },
      } as never)) as any;
      await client.createTaskPushNotificationConfig({ taskId: running.id, id: 'late', url: hook, token: 'tok-late' } as never);
      await expect(client.createTaskPushNotificationConfig({ taskId: running.id, id: 'other', url: hook } as never)).rejects.toThrow(/one per task/);
      const listed = (await client.listTaskPushNotificationConfig({ taskId: running.id } as never)) as any;
      expect(listed.configs.map((c: any) => [c.id, c.token])).toEqual([['late', '']]);
      const asBob = await a2aClient(card, { key: b.agent });
      await expect(asBob.listTaskPushNotificationConfig({ taskId: running.id } as never)).rejects.toThrow(/no task/);
      await expect(asBob.deleteTaskPushNotificationConfig({ taskId: running.id, id: 'late' } as never)).rejects.toThrow(/no task/);
      const pushed = await poll(async () => received.find((r) => JSON.parse(r.body).task?.id === running.id), { what: 'the pushed task', timeoutMs: 20_000 });
      expect(pushed.headers['x-a2a-notification-token']).toBe('tok-late');
      expect(JSON.parse(pushed.body).task.status.state).toBe('TASK_STATE_COMPLETED');
      // Deleted before the call ends: nothing is pushed.
      const quiet = (await client.sendMessage({
        message: dataMessage({ file: '/dev/null', ms: 800 }),
        configuration: { returnImmediately: true, taskPushNotificationConfig: { id: 'q', url: hook } },
      } as never)) as any;
      await client.deleteTaskPushNotificationConfig({ taskId: quiet.id, id: 'q' } as never);
      const done = (await client.getTask({ id: quiet.id } as never)) as any;
      await poll(async () => (((await client.getTask({ id: quiet.id } as never)) as any).status.state === TaskState.TASK_STATE_COMPLETED ? true : undefined), {
        what: 'the quiet call to end',
        timeoutMs: 20_000,
      });
      expect(done.id).toBe(quiet.id);
      await new Promise((r) => setTimeout(r, 500));
      expect(received.filter((r) => r.body.includes(quiet.id))).toEqual([]);
    });
  });
});
