/**
 * The variables other programs read themselves: the CLI's client commands (`holon publish`, `credential`, `earnings`, `payout`)
 * and the reference agent host's tools (agents/). Declared here so docs/configuration.md lists them too.
 */
import { inSection, setting } from './declare.js';

const clients = ['publish, credential, earnings, payout'] as const;
const agentHost = ['agent host'] as const;

export const ELSEWHERE = inSection('tools', {
  url: setting.elsewhere({
    env: 'HOLON_URL',
    doc: 'the hosted gateway `holon publish`, `credential`, `earnings` and `payout` talk to (`--url`)',
    roles: clients,
  }),
  key: setting.elsewhere({ env: 'HOLON_KEY', doc: 'their human key (`--key`): an account signed in with GitHub', roles: clients }),
  anthropicKey: setting.elsewhere({
    env: 'ANTHROPIC_API_KEY',
    doc: '`holon-labs/summarize` (left out by `HOLON_EXCLUDE` by default; `HOLON_EXCLUDE=` lists it)',
    roles: agentHost,
  }),
  anthropicUrl: setting.elsewhere({
    env: 'ANTHROPIC_BASE_URL',
    shown: '`https://api.anthropic.com`',
    doc: 'the Anthropic API `holon-labs/summarize` calls',
    roles: agentHost,
  }),
  summarizeModel: setting.elsewhere({
    env: 'HOLON_SUMMARIZE_MODEL',
    shown: "the tool's `DEFAULT_MODEL`",
    doc: 'the model `holon-labs/summarize` asks for',
    roles: agentHost,
  }),
  secUrl: setting.elsewhere({
    env: 'HOLON_SEC_URL',
    shown: '`https://data.sec.gov`',
    doc: "EDGAR's submissions API `holon-labs/sec-company` reads (`/submissions/CIK##########.json`)",
    roles: agentHost,
  }),
  secFilesUrl: setting.elsewhere({
    env: 'HOLON_SEC_FILES_URL',
    shown: '`https://www.sec.gov`',
    doc: "EDGAR's ticker map (`/files/company_tickers.json`) and the archive the filings' `document_url` point to",
    roles: agentHost,
  }),
  secTimeoutMs: setting.elsewhere({
    env: 'HOLON_SEC_TIMEOUT_MS',
    shown: '10000',
    doc: 'the longest `holon-labs/sec-company` waits for one EDGAR request, 100 to 60000',
    roles: agentHost,
  }),
});
