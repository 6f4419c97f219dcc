/** Hosted mode's rate limits: requests per address and account, and the costly actions per hour. */
import { inSection, setting } from './declare.js';

const perHour = { min: 1, max: 100_000, roles: ['api'] } as const;

export const LIMITS = inSection('hosted', {
  rateLimits: {
    perAddressPerMin: setting.int({
      env: 'HOLON_RATE_ADDRESS_PER_MIN',
      default: 600,
      min: 1,
      max: 1_000_000,
      doc: 'requests per client address and minute',
      roles: ['api'],
    }),
    perAccountPerMin: setting.int({
      env: 'HOLON_RATE_ACCOUNT_PER_MIN',
      default: 1200,
      min: 1,
      max: 1_000_000,
      doc: 'requests per account and minute',
      roles: ['api'],
    }),
    signupsPerHour: setting.int({ env: 'HOLON_RATE_SIGNUPS_PER_HOUR', default: 10, ...perHour, doc: 'sign-ups per address and hour' }),
    // Each publish asks GitHub and resolves an endpoint; each draft calls an author's server: own, tighter buckets.
    publishesPerHour: setting.int({ env: 'HOLON_RATE_PUBLISHES_PER_HOUR', default: 30, ...perHour, doc: 'publishes per account and hour' }),
    draftsPerHour: setting.int({ env: 'HOLON_RATE_DRAFTS_PER_HOUR', default: 60, ...perHour, doc: 'listing drafts per account and hour' }),
    // A re-run asks the author's server every case of a suite again.
    evaluationsPerHour: setting.int({ env: 'HOLON_RATE_EVALUATIONS_PER_HOUR', default: 10, ...perHour, doc: 'evaluation re-runs per account and hour' }),
  },
});
