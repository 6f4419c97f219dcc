/**
 * The messages Holon sends an A2A agent and what it reads in the agent's (docs/a2a-agents.md): one data part carrying
 * JSON, `holon.*` metadata, the text of a status message, the JSON Schema a question offers (`holon/schema`).
 */
import { randomUUID } from 'node:crypto';
import { Role, type Message, type Part, type SendMessageRequest } from '@a2a-js/sdk';
import type { RunContext } from '../types.js';

/** Holon's entries in a message's metadata, each only when set. */
type HolonMetadata = {
  'holon.call_id': string;
  'holon.skill'?: string;
  'holon.max_cost'?: { amount: string; currency: string };
  'holon.delegation'?: string;
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A role-user message with one data part (`value`), Holon's metadata, and the task it continues when given. */
export function userMessage(value: unknown, run: RunContext, skill: string | undefined, task?: { taskId: string; contextId: string }): Message {
  const metadata: HolonMetadata = { 'holon.call_id': run.callId };
  if (skill !== undefined) metadata['holon.skill'] = skill;
  if (run.maxCost) metadata['holon.max_cost'] = { amount: run.maxCost.amount, currency: run.maxCost.currency };
  if (run.delegationToken) metadata['holon.delegation'] = run.delegationToken;
  const part: Part = { content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' };
  return {
    messageId: randomUUID(),
    contextId: task?.contextId ?? '',
    taskId: task?.taskId ?? '',
    role: Role.ROLE_USER,
    parts: [part],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The SendMessage request for a message (the client adds its configuration). */
export function sendRequest(message: Message): SendMessageRequest {
  return { tenant: '', message, configuration: undefined, metadata: undefined };
}

/** The data part among `parts` (the last one), if there is one. */
export function dataPartOf(parts: readonly Part[] | undefined): { value: unknown } | undefined {
  if (!Array.isArray(parts)) return undefined;
  for (let i = parts.length - 1; i >= 0; i--) {
    const content = parts[i]?.content;
    if (content?.$case === 'data') return { value: content.value as unknown };
  }
  return undefined;
}

/** The text parts of a message, joined: what a status message says. */
export function textOf(message: Message | undefined): string {
  if (!message || !Array.isArray(message.parts)) return '';
  return message.parts
    .map((p) => (p?.content?.$case === 'text' && typeof p.content.value === 'string' ? p.content.value : ''))
    .filter((t) => t !== '')
    .join('\n');
}

/** The JSON Schema a question offers: `holon/schema` in the metadata of its status message's data part. */
export function schemaOf(message: Message | undefined): Record<string, unknown> | undefined {
  if (!message || !Array.isArray(message.parts)) return undefined;
  for (const part of message.parts) {
    if (part?.content?.$case !== 'data' || !isObject(part.metadata)) continue;
    const schema = part.metadata['holon/schema'];
    if (isObject(schema)) return schema;
  }
  return undefined;
}
