/** A finished call's output, handed over once (sync answer, GET /v0/calls/{id}, MCP call_agent), then gone. */
import type { ServiceContext } from '../context.js';
import { outputKey } from './jobs.js';

export async function takeOutput(gateway: ServiceContext, callId: string): Promise<unknown> {
  const raw = await gateway.messaging.store.take(outputKey(callId));
  return raw === undefined ? undefined : JSON.parse(raw);
}
