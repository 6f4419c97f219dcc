/** GitHub sign-in (gateway.md §7 Accounts): it only turns a feature on, so its absence never stops the gateway. */
import { inSection, setting } from './declare.js';

export const GITHUB = inSection('hosted', {
  githubClientId: setting.string({
    env: 'HOLON_GITHUB_CLIENT_ID',
    doc: 'the GitHub app that signs people in; without it and the secret, sign-in answers 503',
    roles: ['api'],
  }),
  githubClientSecret: setting.secret({ env: 'HOLON_GITHUB_CLIENT_SECRET', generated: false, doc: "the GitHub app's secret (never logged)", roles: ['api'] }),
  /** `<it>/login/oauth/authorize` and `/access_token`. */
  githubUrl: setting.url({ env: 'HOLON_GITHUB_URL', default: 'https://github.com', doc: "GitHub's web origin (OAuth authorize and token)", roles: ['api'] }),
  githubApiUrl: setting.url({ env: 'HOLON_GITHUB_API_URL', default: 'https://api.github.com', doc: "GitHub's REST API", roles: ['api'] }),
  githubTimeoutMs: setting.int({
    env: 'HOLON_GITHUB_TIMEOUT_MS',
    default: 10_000,
    min: 100,
    max: 120_000,
    doc: 'the longest wait for one GitHub request',
    roles: ['api'],
  }),
});
