/**
 * Webhook settings for tests (shared/platform/config.ts `WebhookSettings`): a quick schedule (0, 300, 300 ms), 2 s
 * attempts and first bytes, the production defaults of fair delivery (4 in flight per account, a breaker after 5
 * failures, 30 s cool-down), then the test's own `extra`.
 */
import type { WebhookSettings } from '../../shared/platform/config.js';

export function testWebhookSettings(extra: Partial<WebhookSettings> = {}): WebhookSettings {
  return {
    scheduleMs: [0, 300, 300],
    attemptTimeoutMs: 2_000,
    firstByteTimeoutMs: 2_000,
    accountInFlight: 4,
    breakerFailures: 5,
    breakerCoolDownMs: 30_000,
    rotationWindowS: 86_400,
    redeliveriesPerHour: 30,
    ...extra,
  };
}
