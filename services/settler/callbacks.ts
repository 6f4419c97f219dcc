/**
 * Signed callbacks: when a call names `callback_url`, the gateway POSTs `{call, status, output, receipt}`
 * once the receipt exists, signed with HMAC-SHA256 over `<timestamp>.<body>`:
 *
 *   Holon-Signature: t=<unix seconds>,v1=<hex hmac>
 *
 * A receiver recomputes HMAC-SHA256(secret, `${t}.${rawBody}`), compares in constant time, and refuses
 * timestamps older than 5 minutes (replays). Delivery is retried with exponential backoff from a queue
 * (8 attempts); the output is kept for pickup until a delivery succeeds or its TTL ends. Redirects are never
 * followed. In hosted mode the URL is checked at submission and every connection goes through the guarded client:
 * loopback, private, link-local, metadata and other reserved addresses are refused (HOLON_ALLOW_PRIVATE_ENDPOINTS=1
 * lifts it outside production).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { request, type Dispatcher } from 'undici';
import { loadReceiptTree } from '../../shared/receipts/store.js';
import type { ServiceContext } from '../../shared/context.js';
import { outputKey } from '../../shared/calls/jobs.js';

export const SIGNATURE_HEADER = 'holon-signature';
export const DEFAULT_CALLBACK_SECRET = 'holon-dev-callback-secret';

export function callbackSecret(): string {
  return process.env.HOLON_CALLBACK_SECRET || DEFAULT_CALLBACK_SECRET;
}

export function signCallback(secret: string, timestamp: number, body: string): string {
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${v1}`;
}

/** What a receiver does: true when the signature is valid and recent. */
export function verifyCallback(secret: string, header: string, body: string, nowS = Math.floor(Date.now() / 1000), toleranceS = 300): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || !parts.v1 || Math.abs(nowS - t) > toleranceS) return false;
  const expected = Buffer.from(signCallback(secret, t, body).split('v1=')[1]!, 'hex');
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface DeliveryOptions {
  /** Hosted mode: the guarded client (shared/platform/guarded-net.ts), so a callback never reaches a private address. */
  dispatcher?: Dispatcher;
}

export async function deliverCallback(ctx: ServiceContext, callId: string, options: DeliveryOptions = {}): Promise<void> {
  const call = await ctx.db('calls').where({ id: callId }).first('callback_url');
  const receipt = await loadReceiptTree(ctx.db, callId);
  if (!call?.callback_url || !receipt) return;
  const raw = receipt.status === 'succeeded' ? await ctx.messaging.store.peek(outputKey(callId)) : undefined;
  const body = JSON.stringify({
    call: { id: callId, status: receipt.status },
    status: receipt.status,
    output: raw === undefined ? null : JSON.parse(raw),
    receipt,
  });
  const t = Math.floor(ctx.now() / 1000);
  const res = await request(call.callback_url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signCallback(callbackSecret(), t, body) },
    signal: AbortSignal.timeout(10_000),
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  await res.body.dump();
  if (res.statusCode < 200 || res.statusCode >= 300) {
    throw new Error(`callback answered ${res.statusCode}`);
  }
  // Delivered: the receiver has the output; it is not kept any longer.
  await ctx.messaging.store.delete(outputKey(callId));
}
