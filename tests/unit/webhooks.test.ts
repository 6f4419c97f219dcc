/**
 * Webhooks, the pure parts: the retry schedule and Retry-After (shared/webhooks/schedule.ts), the settings
 * (shared/platform/config.ts), the payload and its signatures — checked with the standardwebhooks library, as a
 * receiver would, never with our own HMAC.
 */
import { describe, expect, test } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { ConfigError, DEFAULT_WEBHOOK_SCHEDULE, loadConfig, parseDurations } from '../../shared/platform/config.js';
import { MAX_RETRY_AFTER_MS, parseRetryAfter, verdict } from '../../shared/webhooks/schedule.js';
import { callCompleted, webhookHeaders } from '../../shared/webhooks/payload.js';
import { generateWebhookSecret } from '../../shared/webhooks/secrets.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const SCHEDULE = parseDurations(DEFAULT_WEBHOOK_SCHEDULE)!;

describe('the retry schedule', () => {
  test('is the Standard Webhooks one: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h', () => {
    expect(SCHEDULE).toEqual([0, 5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 14 * H, 20 * H, 24 * H]);
  });

  test('2xx delivers, 410 stops, anything else waits for the next delay; after the last, give up', () => {
    expect(verdict(SCHEDULE, 0, { statusCode: 200 })).toEqual({ kind: 'delivered' });
    expect(verdict(SCHEDULE, 3, { statusCode: 204 })).toEqual({ kind: 'delivered' });
    expect(verdict(SCHEDULE, 0, { statusCode: 410 })).toEqual({ kind: 'gone' });
    expect(verdict(SCHEDULE, 0, { statusCode: 500 })).toEqual({ kind: 'retry', delayMs: 5 * S });
    expect(verdict(SCHEDULE, 1, { statusCode: 302 })).toEqual({ kind: 'retry', delayMs: 5 * M });
    expect(verdict(SCHEDULE, 2, { error: 'connect ECONNREFUSED' })).toEqual({ kind: 'retry', delayMs: 30 * M });
    expect(verdict(SCHEDULE, 8, { statusCode: 503 })).toEqual({ kind: 'retry', delayMs: 24 * H });
    expect(verdict(SCHEDULE, 9, { statusCode: 503 })).toEqual({ kind: 'gave_up' });
    expect(verdict(SCHEDULE, 9, { statusCode: 410 })).toEqual({ kind: 'gone' });
    expect(verdict(SCHEDULE, 9, { statusCode: 200 })).toEqual({ kind: 'delivered' });
  });

  test('Retry-After replaces the next delay only when longer', () => {
    expect(verdict(SCHEDULE, 0, { statusCode: 429, retryAfterMs: 60 * S })).toEqual({ kind: 'retry', delayMs: 60 * S });
    expect(verdict(SCHEDULE, 0, { statusCode: 503, retryAfterMs: 1 * S })).toEqual({ kind: 'retry', delayMs: 5 * S });
    expect(verdict(SCHEDULE, 8, { statusCode: 503, retryAfterMs: MAX_RETRY_AFTER_MS })).toEqual({ kind: 'retry', delayMs: 24 * H });
    // Retry-After never keeps a delivery going past the schedule.
    expect(verdict(SCHEDULE, 9, { statusCode: 503, retryAfterMs: 60 * S })).toEqual({ kind: 'gave_up' });
  });

  test('Retry-After: seconds or an HTTP date, capped at 24 h; anything else is ignored', () => {
    const now = Date.parse('2026-12-01T12:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120 * S);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Tue, 01 Dec 2026 12:10:00 GMT', now)).toBe(10 * M);
    expect(parseRetryAfter('Tuesday, 01-Dec-26 12:00:30 GMT', now)).toBe(30 * S);
    expect(parseRetryAfter('Tue, 01 Dec 2026 11:00:00 GMT', now)).toBe(0); // in the past
    expect(parseRetryAfter('999999999', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('Thu, 01 Dec 2027 12:00:00 GMT', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter(['60', '5'], now)).toBe(60 * S);
    for (const bad of [undefined, '', '-5', '1.5', 'soon', '2026-12-01T12:10:00Z', 'Tue, never'])
      expect(parseRetryAfter(bad, now), String(bad)).toBeUndefined();
  });

  test('durations: <n>ms|s|m|h or a bare 0', () => {
    expect(parseDurations('0,200ms,1s,2m,3h')).toEqual([0, 200, 1000, 120_000, 10_800_000]);
    expect(parseDurations('5')).toBeUndefined();
    expect(parseDurations('1d')).toBeUndefined();
    expect(parseDurations('')).toBeUndefined();
  });
});

describe('settings', () => {
  test('defaults: the Standard Webhooks schedule, 15 s per attempt (5 s to the first byte), 4 in flight per account, a breaker at 5 failures for 30 s, a 24 h rotation window, 30 re-sends an hour', () => {
    const c = loadConfig({});
    expect(c.webhooks).toEqual({
      scheduleMs: SCHEDULE,
      attemptTimeoutMs: 15_000,
      firstByteTimeoutMs: 5_000,
      accountInFlight: 4,
      breakerFailures: 5,
      breakerCoolDownMs: 30_000,
      rotationWindowS: 86_400,
      redeliveriesPerHour: 30,
    });
  });

  test('the first-byte timeout is never longer than the attempt’s; the fairness settings are bounded', () => {
    expect(loadConfig({ HOLON_WEBHOOK_TIMEOUT_MS: '3000' }).webhooks.firstByteTimeoutMs).toBe(3_000);
    expect(loadConfig({ HOLON_WEBHOOK_FIRST_BYTE_TIMEOUT_MS: '1500' }).webhooks.firstByteTimeoutMs).toBe(1_500);
    const c = loadConfig({ HOLON_WEBHOOK_ACCOUNT_INFLIGHT: '2', HOLON_WEBHOOK_BREAKER_FAILURES: '10', HOLON_WEBHOOK_BREAKER_COOLDOWN_MS: '60000' });
    expect(c.webhooks).toMatchObject({ accountInFlight: 2, breakerFailures: 10, breakerCoolDownMs: 60_000 });
    expect(() => loadConfig({ HOLON_WEBHOOK_ACCOUNT_INFLIGHT: '0' })).toThrow(/HOLON_WEBHOOK_ACCOUNT_INFLIGHT/);
    expect(() => loadConfig({ HOLON_WEBHOOK_BREAKER_FAILURES: 'many' })).toThrow(/HOLON_WEBHOOK_BREAKER_FAILURES/);
  });

  test('HOLON_CALLBACK_SECRET must be a whsec_ secret; the message never repeats it', () => {
    const secret = generateWebhookSecret();
    expect(loadConfig({ HOLON_CALLBACK_SECRET: secret }).webhooks.devSecret).toBe(secret);
    for (const bad of ['holon-dev-callback-secret', 'whsec_short', `whsec_${'!'.repeat(40)}`]) {
      let e: unknown;
      try {
        loadConfig({ HOLON_CALLBACK_SECRET: bad });
      } catch (err) {
        e = err;
      }
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as Error).message).toContain('HOLON_CALLBACK_SECRET must be a Standard Webhooks secret');
      expect((e as Error).message).not.toContain(bad);
    }
  });

  test('a schedule must be durations of at most 24 h', () => {
    expect(loadConfig({ HOLON_WEBHOOK_SCHEDULE: '0, 100ms, 1s' }).webhooks.scheduleMs).toEqual([0, 100, 1000]);
    expect(() => loadConfig({ HOLON_WEBHOOK_SCHEDULE: '0,25h' })).toThrow(/HOLON_WEBHOOK_SCHEDULE/);
    expect(() => loadConfig({ HOLON_WEBHOOK_SCHEDULE: 'soon' })).toThrow(/HOLON_WEBHOOK_SCHEDULE/);
  });
});

describe('payload and signatures', () => {
  const body = callCompleted({
    callId: 'r_1',
    status: 'succeeded',
    createdAt: new Date('2026-12-01T12:00:00Z'),
    output: { text: 'HI' },
    receipt: { id: 'r_1', billed: true },
  });

  test('call.completed, version 1', () => {
    expect(JSON.parse(body)).toEqual({
      type: 'call.completed',
      version: 1,
      timestamp: '2026-12-01T12:00:00.000Z',
      call: { id: 'r_1', status: 'succeeded' },
      status: 'succeeded',
      output: { text: 'HI' },
      receipt: { id: 'r_1', billed: true },
    });
  });

  test('secrets are whsec_ + base64 of 32 random bytes, never twice the same', () => {
    const a = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(a);
  });

  test('every secret signs; a receiver holding any one of them verifies, a stranger does not', () => {
    const [older, newer, stranger] = [generateWebhookSecret(), generateWebhookSecret(), generateWebhookSecret()];
    const headers = webhookHeaders([newer, older], 'msg_r_1', new Date(), body);
    expect(headers['webhook-id']).toBe('msg_r_1');
    expect(String(headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+ v1,[A-Za-z0-9+/=]+$/);
    expect(new Webhook(newer).verify(body, headers)).toMatchObject({ type: 'call.completed' });
    expect(new Webhook(older).verify(body, headers)).toMatchObject({ type: 'call.completed' });
    expect(() => new Webhook(stranger).verify(body, headers)).toThrow(/No matching signature/);
    expect(() => new Webhook(newer).verify(body.replace('HI', 'HO'), headers)).toThrow(/No matching signature/);
    // A replay: an old timestamp no longer verifies.
    const old = webhookHeaders([newer], 'msg_r_1', new Date(Date.now() - 10 * M), body);
    expect(() => new Webhook(newer).verify(body, old)).toThrow(/too old/);
  });
});
