/** A finished call's output, handed over once (sync answer, GET /v0/calls/{id}, MCP call_agent), then gone. */
import { outputKey, type GatewayContext } from '../context.js';

export async function takeOutput(gateway: GatewayContext, callId: string): Promise<unknown> {
  const raw = await gateway.messaging.store.take(outputKey(callId));
  return raw === undefined ? undefined : JSON.parse(raw);
}
