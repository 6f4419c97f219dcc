/** Webhooks (docs/webhooks.md): the schedule, the attempt's limits, the breaker, the rotation window, dev mode's one secret. */
import { inSection, setting } from './declare.js';

/** The Standard Webhooks retry schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
export const DEFAULT_WEBHOOK_SCHEDULE = '0,5s,5m,30m,2h,5h,10h,14h,20h,24h';

/** `whsec_` and the base64 of at least 24 bytes: what standardwebhooks accepts and what the gateway generates. */
const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/;

const settler = ['settler'] as const;

export const WEBHOOKS = inSection('webhooks', {
  webhooks: {
    /** Absent: generated at start-up and printed once on the banner. Hosted mode signs with each account's own secrets. */
    devSecret: setting.secret({
      env: 'HOLON_CALLBACK_SECRET',
      generated: true,
      shape: {
        pattern: WEBHOOK_SECRET,
        problem:
          'HOLON_CALLBACK_SECRET must be a Standard Webhooks secret: "whsec_" and the base64 of 24 or more random bytes ' +
          '(e.g. whsec_$(openssl rand -base64 32)); callbacks are now signed with webhook-signature (docs/webhooks.md)',
      },
      shown: 'generated at start-up, printed once',
      doc: "dev mode: the one webhook signing secret, `whsec_` and base64 (`whsec_$(openssl rand -base64 32)`); hosted mode signs with each account's own",
      roles: settler,
    }),
    scheduleMs: setting.durations({
      env: 'HOLON_WEBHOOK_SCHEDULE',
      default: DEFAULT_WEBHOOK_SCHEDULE,
      maxItems: 50,
      maxMs: 86_400_000,
      limits: '1 to 50 delays of at most 24h',
      doc: 'the delay before each attempt of a delivery',
      roles: settler,
    }),
    attemptTimeoutMs: setting.int({
      env: 'HOLON_WEBHOOK_TIMEOUT_MS',
      default: 15_000,
      min: 100,
      max: 120_000,
      doc: 'the longest one attempt may take',
      roles: settler,
    }),
    /** At most the attempt's (parse.ts): a receiver that accepts and never answers holds a slot this long, not the attempt's. */
    firstByteTimeoutMs: setting.int({
      env: 'HOLON_WEBHOOK_FIRST_BYTE_TIMEOUT_MS',
      default: 5_000,
      min: 100,
      max: 120_000,
      doc: "the longest an attempt waits for the answer's headers (at most `HOLON_WEBHOOK_TIMEOUT_MS`): a receiver that accepts and never answers frees its slot then",
      roles: settler,
    }),
    accountInFlight: setting.int({
      env: 'HOLON_WEBHOOK_ACCOUNT_INFLIGHT',
      default: 4,
      min: 1,
      max: 1_000,
      doc: "attempts of one account's deliveries in flight at once, per settler process (of its 16 delivery slots); the rest wait their turn, round robin between accounts, without using an attempt",
      roles: settler,
    }),
    breakerFailures: setting.int({
      env: 'HOLON_WEBHOOK_BREAKER_FAILURES',
      default: 5,
      min: 1,
      max: 1_000,
      doc: "a receiver host's consecutive failures (no connection, no answer in time, 5xx) that open its circuit breaker, per settler process: its attempts then wait without a slot",
      roles: settler,
    }),
    breakerCoolDownMs: setting.int({
      env: 'HOLON_WEBHOOK_BREAKER_COOLDOWN_MS',
      default: 30_000,
      min: 100,
      max: 3_600_000,
      doc: "how long an open breaker holds its host's attempts before one probe goes (its success closes the breaker, its failure opens it again)",
      roles: settler,
    }),
    rotationWindowS: setting.int({
      env: 'HOLON_WEBHOOK_ROTATION_WINDOW_S',
      default: 86_400,
      min: 1,
      max: 30 * 86_400,
      doc: 'how long the old secret still signs after a rotation',
      roles: ['api', 'settler'],
    }),
    /** A re-send asks the caller's receiver again: its own bucket, per account. */
    redeliveriesPerHour: setting.int({
      env: 'HOLON_RATE_REDELIVERIES_PER_HOUR',
      default: 30,
      min: 1,
      max: 100_000,
      doc: 're-sends (`POST /v0/calls/{id}/deliveries`) per account and hour',
      roles: ['api'],
    }),
  },
  deliveryRetentionDays: setting.int({
    env: 'HOLON_DELIVERY_RETENTION_DAYS',
    default: 30,
    min: 1,
    max: 3650,
    doc: 'days the delivery log of a finished delivery is kept, and an MCP task of a final call; then the settler deletes them',
    roles: settler,
  }),
});
