/**
 * A2A agents for tests: the A2A SDK's own server (express, DefaultRequestHandler, InMemoryTaskStore) on 127.0.0.1,
 * serving its card at /.well-known/agent-card.json and its JSON-RPC (/a2a/jsonrpc) and HTTP+JSON (/a2a/rest)
 * interfaces, with one AgentExecutor per behaviour. A behaviour publishes the task's events through `Emit`; a
 * cancelTask reaching the server is recorded (`cancels`) and ends the task (canceled).
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { Role, TaskState, type AgentCard, type Message, type Part } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import { buildManifest } from './manifest-builder.js';
import type { AgentVersion } from '../../shared/registry/agent-version.js';

const SKILL = 'summarise';

/** What a behaviour uses to speak for the agent. */
interface Emit {
  ctx: RequestContext;
  /** The data part of the request's (latest) user message. */
  input: unknown;
  /** The task event first: a new task (submitted), or the task going on (working). */
  submitted(): void;
  status(state: TaskState, say?: { text?: string; data?: unknown; dataMetadata?: Record<string, unknown>; metadata?: Record<string, unknown> }): void;
  artifact(data: unknown, metadata?: Record<string, unknown>): void;
  /** Resolves when a cancelTask reached the server for this task. */
  cancelled: Promise<void>;
  done(): void;
}

export type Behaviour = (e: Emit) => Promise<void> | void;

export interface A2aAgent {
  /** The card's URL: the manifest's runtime.endpoint. */
  url: string;
  origin: string;
  /** Task ids a cancelTask reached. */
  cancels: string[];
  /** Every user message received. */
  received: Message[];
  /** Every request's method, path and Authorization header (null when none). */
  hits: Array<{ method: string; path: string; authorization: string | null }>;
  /** Serve another card from now on (the interfaces still served: a card changed after publishing). */
  changeCard(change: (card: AgentCard) => AgentCard): void;
  close(): Promise<void>;
}

export interface A2aAgentOptions {
  streaming?: boolean;
  binding?: 'JSONRPC' | 'HTTP+JSON';
  /** Change the card before it is served (another origin, signatures…). */
  card?: (card: AgentCard) => AgentCard | Promise<AgentCard>;
}

const dataPart = (value: unknown, metadata?: Record<string, unknown>): Part => ({
  content: { $case: 'data', value },
  metadata,
  filename: '',
  mediaType: 'application/json',
});
const textPart = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });

function dataOf(message: Message | undefined): unknown {
  const part = message?.parts.find((p) => p.content?.$case === 'data');
  return part?.content?.$case === 'data' ? part.content.value : undefined;
}

function emitter(ctx: RequestContext, bus: ExecutionEventBus, cancelled: Promise<void>): Emit {
  const { taskId, contextId } = ctx;
  return {
    ctx,
    input: dataOf(ctx.userMessage),
    cancelled,
    submitted() {
      if (ctx.task) {
        // A task that goes on (an answer to its question): the task event first, as the server wants.
        bus.publish(AgentEvent.task({ ...ctx.task, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() } }));
        return;
      }
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
          artifacts: [],
          history: [ctx.userMessage],
          metadata: undefined,
        }),
      );
    },
    status(state, say = {}) {
      const parts = [...(say.text ? [textPart(say.text)] : []), ...(say.data !== undefined ? [dataPart(say.data, say.dataMetadata)] : [])];
      const message: Message | undefined = parts.length
        ? { messageId: randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] }
        : undefined;
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata: say.metadata }));
    },
    artifact(data, metadata) {
      const artifact = { artifactId: randomUUID(), name: '', description: '', parts: [dataPart(data)], metadata: undefined, extensions: [] };
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: false, metadata }));
    },
    done() {
      bus.finished();
    },
  };
}

function cardOf(origin: string, options: A2aAgentOptions): AgentCard {
  const binding = options.binding ?? 'JSONRPC';
  return {
    name: 'Test agent',
    description: 'An A2A agent for tests',
    supportedInterfaces: [
      { url: `${origin}${binding === 'JSONRPC' ? '/a2a/jsonrpc' : '/a2a/rest'}`, protocolBinding: binding, tenant: '', protocolVersion: '1.0' },
    ],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: options.streaming ?? false, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: [
      { id: SKILL, name: 'Summarise', description: 'Summarises', tags: ['test'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] },
    ],
    signatures: [],
  };
}

/** An A2A agent whose every task runs `behaviour`; closed by the caller. */
export async function startA2aAgent(behaviour: Behaviour, options: A2aAgentOptions = {}): Promise<A2aAgent> {
  const cancels: string[] = [];
  const received: Message[] = [];
  const onCancel = new Map<string, () => void>();
  const executor: AgentExecutor = {
    async execute(ctx, bus) {
      received.push(ctx.userMessage);
      const cancelled = new Promise<void>((resolve) => onCancel.set(ctx.taskId, resolve));
      await behaviour(emitter(ctx, bus, cancelled));
    },
    async cancelTask(taskId, bus) {
      cancels.push(taskId);
      onCancel.get(taskId)?.();
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId: '',
          status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: undefined },
          metadata: undefined,
        }),
      );
      bus.finished();
    },
  };
  const hits: A2aAgent['hits'] = [];
  const app = express();
  app.use((req, _res, next) => {
    hits.push({ method: req.method, path: req.path, authorization: req.headers.authorization ?? null });
    next();
  });
  const server: http.Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let card = await (options.card ?? ((c: AgentCard) => c))(cardOf(origin, options));
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => card, cache: { maxAge: 0 } }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  app.use('/a2a/rest', restHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  return {
    url: `${origin}/.well-known/agent-card.json`,
    origin,
    cancels,
    received,
    hits,
    changeCard: (change) => {
      card = change(card);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An a2a agent version (acme/a2a-agent@1.0.0) whose card is at `endpoint`; `origin` published unless said. */
export function a2aAgent(endpoint: string, over: Partial<AgentVersion> = {}): AgentVersion {
  return {
    manifest: buildManifest({ id: 'acme/a2a-agent', version: '1.0.0', runtime: { kind: 'a2a', endpoint, skill: SKILL, timeoutS: 60 } }),
    origin: 'published',
    ...over,
  };
}

// ------------------------------------------------------------------ behaviours

/** Answers `{echo: input}` as its artifact; the final status update carries units and a quote. */
export const completes: Behaviour = (e) => {
  e.submitted();
  e.status(TaskState.TASK_STATE_WORKING);
  e.artifact({ echo: e.input });
  e.status(TaskState.TASK_STATE_COMPLETED, { metadata: { 'holon/units': '3', 'holon/quote': '0.25' } });
  e.done();
};

/** Fails, saying why. */
export const fails: Behaviour = (e) => {
  e.submitted();
  e.status(TaskState.TASK_STATE_FAILED, { text: 'the document is empty' });
  e.done();
};

/** Asks for a name (input-required, with a JSON Schema), then answers `{hello: name}` with the answer it got. */
export const asks: Behaviour = (e) => {
  if (!e.ctx.task) {
    e.submitted();
    e.status(TaskState.TASK_STATE_INPUT_REQUIRED, {
      text: 'which name?',
      data: {},
      dataMetadata: { 'holon/schema': { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
    });
  } else {
    e.submitted();
    e.artifact({ hello: (e.input as { name?: unknown }).name });
    e.status(TaskState.TASK_STATE_COMPLETED);
  }
  e.done();
};

/** Streams `count` artifacts {page: i} with cumulative holon/units i, then completes; stops when cancelled. */
export function streamsPages(count: number, gapMs = 20): Behaviour {
  return async (e) => {
    let cancelled = false;
    void e.cancelled.then(() => (cancelled = true));
    e.submitted();
    e.status(TaskState.TASK_STATE_WORKING);
    for (let i = 1; i <= count && !cancelled; i++) {
      e.artifact({ page: i }, { 'holon/units': i });
      await new Promise((r) => setTimeout(r, gapMs));
    }
    if (cancelled) return;
    e.status(TaskState.TASK_STATE_COMPLETED, { metadata: { 'holon/units': String(count) } });
    e.done();
  };
}

/** Works for ever (until a cancelTask reaches it). */
export const neverEnds: Behaviour = async (e) => {
  e.submitted();
  e.status(TaskState.TASK_STATE_WORKING);
  await e.cancelled;
};

/** The version declaring a streamed output (interface.stream): its artifact updates are then the call's chunks. */
export function streaming(v: AgentVersion): AgentVersion {
  return { ...v, manifest: { ...v.manifest, interface: { ...v.manifest.interface, stream: { chunk: { type: 'object' } } } } };
}
