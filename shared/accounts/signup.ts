/**
 * Signing up by email (gateway.md §7 Accounts): `POST /v0/signup {handle, email}` makes, in ONE transaction, the
 * account, its demo credit (`signup:<handle>`), the starter mandate `<handle>/sandbox`, a human key and an
 * `ask_in_client` agent key for the sandbox. Keys are returned once. `createAccount` is the one way an account is
 * made: signing in with GitHub for the first time uses it too (github-sign-in.ts).
 *
 * Handles follow GitHub's login rules in lower case (2–39 of a-z, 0-9 and single '-', not at either end). Refused:
 * handles taken, every agent author's namespace in the registry, the platform account, and a reserved list. An
 * email is unverified, unique per account, and refused when a disabled account had it.
 */
import type { Db, Queryable, Tx } from '../db/connect.js';
import { HolonError } from '../core/errors.js';
import { loadMandate, mandateView, saveMandate } from '../mandates/store.js';
import { creditSignup } from '../ledger/demo-credit.js';
import { isHandle } from '../core/identifiers.js';
import { PLATFORM_ACCOUNT } from '../ledger/accounts.js';
import { validateMandate } from '../core/mandate/validate.js';
import { formatAmount } from '../core/money.js';
import type { Registry } from '../registry/registry.js';
import { createKey, type MintedKey } from './keys.js';
import type { WebhookSecrets } from '../webhooks/secrets.js';
import type { SigningKey } from '../signing/keys.js';

/** Names that would collect other people's money or pose as the platform (and the project's former names). */
const RESERVED_HANDLES: ReadonlySet<string> = new Set([
  PLATFORM_ACCOUNT,
  'holon-labs',
  'holon-ai',
  'holonai',
  'useholon',
  'agentpay',
  'agent-pay',
  'hireagents',
  'admin',
  'administrator',
  'root',
  'system',
  'platform',
  'operator',
  'moderator',
  'staff',
  'official',
  'api',
  'www',
  'mcp',
  'console',
  'docs',
  'status',
  'help',
  'support',
  'security',
  'abuse',
  'postmaster',
  'billing',
  'payments',
  'payouts',
  'treasury',
  'external',
  'demo',
  'demo-credit',
  'examples',
  'fixtures',
  'test',
  'sandbox',
  'anthropic',
  'claude',
  'openai',
  'github',
  'null',
  'undefined',
  'me',
  'you',
  'everyone',
]);

const EMAIL = /^[^\s@<>()[\]\\,;:"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** Why a handle cannot be had, or null when it can (availability in the database aside). */
function handleProblem(handle: string, registry: Registry): string | null {
  if (!isHandle(handle) || handle.includes('--')) {
    return 'a handle is 2 to 39 of a-z, 0-9 and single hyphens, not starting or ending with a hyphen (GitHub login rules, lower case)';
  }
  if (RESERVED_HANDLES.has(handle)) return `"${handle}" is reserved`;
  if (registry.list().some((a) => a.manifest.namespace === handle)) return `"${handle}" is the namespace of listed agents`;
  return null;
}

export function normaliseEmail(email: string): string | null {
  const e = email.trim().toLowerCase();
  return e.length <= 254 && EMAIL.test(e) ? e : null;
}

export interface SignupSettings {
  /** Demo credit (HOLON_SIGNUP_CREDIT), EUR micro-units. */
  credit: bigint;
  registry: Registry;
  /** The gateway's key: the starter mandate is signed like every stored mandate (shared/mandates/signing.ts). */
  signingKey: SigningKey;
  /** Webhook signing secrets (shared/webhooks/secrets.ts): sign-up mints the account's first one. */
  webhooks?: Pick<WebhookSecrets, 'mint'>;
}

/** The starter mandate's id: `<handle>/sandbox`. */
export const starterMandateId = (handle: string): string => `${handle}/sandbox`;

/** The starter mandate: the demo credit to spend on the platform's own agents, approval above 0.50. */
function starterMandate(handle: string, credit: bigint) {
  return {
    id: starterMandateId(handle),
    issuer: handle,
    grantee: `${handle}/assistant`,
    allow: { agents: ['holon-labs/*'], capabilities: ['text.*', 'data.*', 'extraction.*'] },
    approval: { above: '0.50' },
    budget: { total: formatAmount(credit > 0n ? credit : 0n), currency: 'EUR', per_call: '1.00' },
    delegation: { max_depth: 2 },
  };
}

export interface NewAccount {
  /** As given: lower-cased and checked here. */
  handle: string;
  email: string;
  /** Signing in with GitHub: the GitHub account it is linked to. */
  github?: { id: number; login: string };
}

export interface CreatedAccount {
  account: { handle: string; email: string };
  balance: { currency: 'EUR'; amount: string };
  mandate: ReturnType<typeof mandateView>;
}

export interface SignedUp extends CreatedAccount {
  keys: { human: MintedKey; agent: MintedKey };
  /** The account's webhook signing secret, shown once (docs/webhooks.md); null when the gateway cannot keep one. */
  webhook_secret?: string | null;
}

/**
 * The one way an account is made, by email sign-up or GitHub sign-in, inside the caller's transaction: the account,
 * its demo credit and its starter mandate (the caller mints the keys). Refusals: `invalid_handle` and a malformed
 * email (400), `email_blocked` (403), `handle_taken`, `email_taken` and `github_linked` (409).
 */
export async function createAccount(trx: Tx, input: NewAccount, settings: SignupSettings): Promise<CreatedAccount> {
  const handle = input.handle.trim().toLowerCase();
  const problem = handleProblem(handle, settings.registry);
  if (problem) throw new HolonError('invalid_handle', problem, [{ path: '$.handle', message: problem }]);
  const email = normaliseEmail(input.email);
  if (!email) throw new HolonError('invalid_request', 'the email is not an address', [{ path: '$.email', message: 'is not an email address' }]);
  const starter = validateMandate(starterMandate(handle, settings.credit), { caller: true });
  if (!starter.ok) throw new Error(`the starter mandate is invalid: ${JSON.stringify(starter.problems)}`);

  if (await trx('blocked_emails').where({ email }).first('email')) {
    throw new HolonError('email_blocked', 'this email belonged to a disabled account and cannot sign up again');
  }
  const inserted = await trx.raw<{ rows: unknown[] }>(
    `INSERT INTO accounts (handle, kind, email, github_id, github_login) VALUES (?, 'user', ?, ?, ?) ON CONFLICT DO NOTHING RETURNING handle`,
    [handle, email, input.github?.id ?? null, input.github?.login ?? null],
  );
  if (inserted.rows.length === 0) {
    if (await trx('accounts').where({ handle }).first('handle')) throw new HolonError('handle_taken', `the handle "${handle}" is taken`);
    if (await trx('accounts').where({ email }).first('handle')) throw new HolonError('email_taken', 'an account with this email exists');
    throw new HolonError('github_linked', 'an account is linked to this GitHub account already');
  }
  await creditSignup(trx, handle, settings.credit);
  await saveMandate(trx, starter.mandate, settings.signingKey);
  const stored = (await loadMandate(trx, starter.mandate.id))!;
  return {
    account: { handle, email },
    balance: { currency: 'EUR' as const, amount: formatAmount(settings.credit > 0n ? settings.credit : 0n) },
    mandate: mandateView(stored),
  };
}

/** The starter sandbox's `ask_in_client` agent key (it is meant for Claude Code or Claude Desktop). */
export function createStarterAgentKey(trx: Queryable, handle: string): Promise<MintedKey> {
  return createKey(trx, { kind: 'agent', account: handle, mandateId: starterMandateId(handle), askInClient: true });
}

export async function signup(db: Db, input: { handle: string; email: string }, settings: SignupSettings): Promise<SignedUp> {
  return db.transaction(async (trx) => {
    const made = await createAccount(trx, input, settings);
    const handle = made.account.handle;
    const human = await createKey(trx, { kind: 'human', account: handle });
    const agent = await createStarterAgentKey(trx, handle);
    const webhookSecret = settings.webhooks ? ((await settings.webhooks.mint(trx, handle)) ?? null) : undefined;
    return { ...made, keys: { human, agent }, ...(webhookSecret !== undefined ? { webhook_secret: webhookSecret } : {}) };
  });
}
