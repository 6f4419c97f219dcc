/** What the gateway lists and runs: the shipped agents, the reference agent host, the evaluation suites, the ranking. */
import { inSection, ROLES, setting } from './declare.js';
import { nonEmpty } from './text.js';

const DEV_REGISTRY = ['agents', 'examples'];
/** Hosted: only the shipped agents of agents/; the demos of examples/ are listed only when named (gateway.md §7). */
export const HOSTED_REGISTRY = ['agents'];

/**
 * Listed (not in HOLON_EXCLUDE), holon-labs/sec-company needs HOLON_SEC_CONTACT, which production requires to be an
 * email address: the HTML standard's valid one, with a dot in its domain (agents/sec-company/tool.mjs, the same pattern).
 */
const SEC_COMPANY = 'holon-labs/sec-company';
const SEC_CONTACT = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export const CATALOGUE = inSection('gateway', {
  /** Directories of the dev registry; parse.ts narrows an unnamed one to HOSTED_REGISTRY in hosted mode. */
  registryDirs: setting.list({
    env: 'HOLON_REGISTRY',
    default: DEV_REGISTRY,
    shown: `\`${DEV_REGISTRY.join(',')}\`; hosted \`${HOSTED_REGISTRY.join(',')}\``,
    doc: 'directories of shipped agents (`--registry`), comma-separated',
    roles: ROLES,
  }),
  exclude: setting.list({
    env: 'HOLON_EXCLUDE',
    default: ['holon-labs/summarize', SEC_COMPANY],
    emptyIsNone: true,
    doc: 'agent ids (or `id@version`) never listed; empty lists every agent',
    roles: ROLES,
  }),
  /** Read at start by shared/catalogue/sample-records.ts. */
  recordsFile: setting.file({
    env: 'HOLON_RECORDS',
    shown: 'off',
    doc: 'a JSON file of sample Agent Records, shown labelled beside agents without measured runs, never ranked (`docs/publishing.md`)',
    roles: ROLES,
  }),
  rankingMinPayers: setting.int({
    env: 'HOLON_RANKING_MIN_PAYERS',
    default: 3,
    min: 1,
    max: 1_000_000,
    doc: "distinct payers whose runs an agent version needs before its measured success rate and cost move the capability ranking and search (below: it ranks on its worst case at 50 %, like a new agent); its author's own calls never count, and on a hosted gateway only payers linked to GitHub or funded from outside beyond sign-up credit (docs/publishing.md)",
    roles: ['api', 'runner'],
  }),
  /** The registry lists holon-labs/sec-company from this, never from the process environment itself. */
  secContact: setting.string({
    env: 'HOLON_SEC_CONTACT',
    section: 'tools',
    doc: "an email address the SEC can reach, sent in every EDGAR request's User-Agent (its fair access policy). `holon-labs/sec-company` is listed only with it and when not in `HOLON_EXCLUDE`; production then needs it",
    roles: [...ROLES, 'agent host'],
    production: {
      refuses: 'without an email address in `HOLON_SEC_CONTACT` while `holon-labs/sec-company` is listed',
      check: (_contact, { raw, exclude }) =>
        exclude.includes(SEC_COMPANY) || SEC_CONTACT.test(nonEmpty(raw) ?? '')
          ? undefined
          : `production needs HOLON_SEC_CONTACT (an email address the SEC can reach) while ${SEC_COMPANY} is listed: set it, or exclude the agent`,
    },
  }),
  agentHost: setting.toggle({
    env: 'HOLON_AGENT_HOST',
    default: true,
    flips: ['0', 'off', 'false'],
    doc: '`0` keeps `holon serve` (dev) and the image beside `serve`, `runner`, `evaluator` from starting the reference MCP agent host',
    roles: ['serve', 'entrypoint'],
  }),
  /** The shipped manifests of agents/ name http://127.0.0.1:<default>/mcp; the registry points them here instead (shared/registry/agent-host.ts). */
  agentHostPort: setting.int({
    env: 'HOLON_AGENT_HOST_PORT',
    default: 7474,
    min: 1,
    max: 65535,
    doc: "the reference MCP agent host's port on 127.0.0.1; the shipped agents of `agents/` are called there whatever port their manifests name (`docs/mcp.md`)",
    roles: [...ROLES, 'serve', 'entrypoint', 'agent host'],
  }),
  evalsDir: setting.file({ env: 'HOLON_EVALS', default: 'evals', doc: 'the public evaluation suites (`docs/evaluation.md`)', roles: ['api', 'evaluator'] }),
  privateEvalsDir: setting.file({
    env: 'HOLON_PRIVATE_EVALS',
    shown: 'none',
    doc: 'the private holdout cases, laid out like `evals/`; a missing directory is logged, not fatal',
    roles: ['api', 'evaluator'],
    production: { needs: '(the directory of private holdout cases, laid out like evals/): without it agents are judged on public cases only' },
  }),
});
