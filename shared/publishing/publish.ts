/**
 * Publishing a version (gateway.md §7 "Publishing agents"): `POST /v0/agents` with a human key, the manifest as
 * the body. Every condition is checked and every failed one reported with its JSON path; the status is the first
 * of these that applies:
 *   403 foreign_namespace   the id is not in the author's namespace (`<handle>/…`)
 *   403 github_not_linked   the account is not linked to GitHub ("sign in with GitHub to publish")
 *   422 invalid_manifest    the manifest (license, fork rules…), the runtime kind, the endpoint, or the repository
 *                           (public, on GitHub, owned by the author or an organisation listing them publicly)
 *   409 version_taken       the number was used before (a yanked number stays taken); also the loser of a race
 *   502 / 503               GitHub answered something unexpected / did not answer (nothing is listed)
 * A gateway without a GitHub app (HOLON_GITHUB_CLIENT_ID/SECRET) refuses to publish (503 publishing_off).
 * Listing itself is shared/registry/published.ts; an author's yank reuses moderation's (shared/publishing/moderation.ts).
 */
import type { ServiceContext } from '../context.js';
import { type ErrorCode, HolonError, type Problem } from '../core/errors.js';
import { sortProblems, validateManifest } from '../core/manifest/validate.js';
import { isOpenSource, type Manifest } from '../core/manifest/types.js';
import { assertPublicUrl, type LookupAll } from '../platform/guarded-net.js';
import { recordPublished } from '../registry/published.js';
import { wakeEvaluators } from '../evaluation/jobs.js';
import { queueEvaluations, type EvaluationRow, type SuiteSummary } from '../evaluation/store.js';
import { GitHubUnavailable, isPublicMember, readRepository, type GitHubSettings } from '../accounts/github.js';
import { yankVersion, type Yanked } from './moderation.js';
import { checkA2aCard } from './a2a-card.js';
import { isJsonObject, type JsonObject } from '../core/json.js';

type Ctx = Pick<ServiceContext, 'db' | 'registry' | 'messaging' | 'log'>;

export interface PublishSettings {
  /** The GitHub app; undefined = publishing is off (503). */
  github: GitHubSettings | undefined;
  /** HOLON_ALLOW_PRIVATE_ENDPOINTS: lifts the address check and admits http endpoints. */
  allowPrivate: boolean;
  /** The endpoint's resolver (tests); default dns.lookup. */
  lookup?: LookupAll;
  /** The suites that apply to these capabilities (shared/evaluation/suites.ts); none when absent. */
  suites?: (capabilities: readonly string[]) => SuiteSummary[];
}

export interface Published {
  agent: string;
  version: string;
  author: string;
  license: string;
  /** The GitHub repository checked now (`owner/repo`, as GitHub names it), or `proprietary`: no code was checked. */
  source: { repository: string } | 'proprietary';
  /** `pending` with the suites queued for it, or `none` when no suite applies to its capabilities. */
  evaluation: { status: 'pending' | 'none'; suites: string[] };
  listed: true;
}

/** Which condition a problem breaks; the first kind present decides the status. */
type Kind = 'namespace' | 'not_linked' | 'invalid' | 'taken' | 'github_error' | 'github_down';

const DECISIONS: ReadonlyArray<{ kind: Kind; code: ErrorCode; message: string }> = [
  { kind: 'namespace', code: 'foreign_namespace', message: 'you can only publish agents in your own namespace' },
  { kind: 'not_linked', code: 'github_not_linked', message: 'sign in with GitHub to publish' },
  { kind: 'invalid', code: 'invalid_manifest', message: 'the version cannot be listed' },
  { kind: 'taken', code: 'version_taken', message: 'this version number was used before: publish a new version' },
  { kind: 'github_error', code: 'github_error', message: 'GitHub failed while checking the repository; nothing was listed' },
  { kind: 'github_down', code: 'github_unavailable', message: 'GitHub did not answer while checking the repository; nothing was listed' },
];

class Findings {
  private readonly found: Array<Problem & { kind: Kind }> = [];
  add(kind: Kind, path: string, message: string): void {
    this.found.push({ kind, path, message });
  }
  /** Whether a problem was found at `path`. */
  has(path: string): boolean {
    return this.found.some((p) => p.path === path);
  }
  addAll(kind: Kind, problems: readonly Problem[]): void {
    for (const p of problems) this.add(kind, p.path, p.message);
  }
  /** Throw the decided refusal, listing every problem, if there is any. */
  decide(): void {
    if (this.found.length === 0) return;
    const d = DECISIONS.find((x) => this.found.some((p) => p.kind === x.kind))!;
    const n = this.found.length;
    const problems = sortProblems(this.found.map(({ path, message }) => ({ path, message })));
    throw new HolonError(d.code, `${d.message} (${n} problem${n === 1 ? '' : 's'})`, problems);
  }
}

interface Author {
  handle: string;
  githubId: number | null;
  githubLogin: string | null;
}

async function readAuthor(ctx: Ctx, handle: string): Promise<Author> {
  const row = (await ctx.db('accounts').where({ handle }).first('github_id', 'github_login')) as
    | { github_id: unknown; github_login: string | null }
    | undefined;
  const id = row?.github_id === null || row?.github_id === undefined ? null : Number(row.github_id);
  return { handle, githubId: id, githubLogin: row?.github_login ?? null };
}

/** A fork may only name a version listed now (a yanked one is found by get() but not listed). */
function listedUpstream(ctx: Ctx) {
  return (id: string, version: string): Manifest | null =>
    ctx.registry.versions(id).some((a) => a.manifest.version === version) ? (ctx.registry.get(id, version)?.manifest ?? null) : null;
}

function checkNamespace(f: Findings, doc: JsonObject, author: string): void {
  if (typeof doc.id === 'string' && !doc.id.startsWith(`${author}/`)) {
    f.add('namespace', '$.id', `must be in your namespace: ${author}/<name>, not ${doc.id.slice(0, 100)}`);
  }
}

function checkLinked(f: Findings, author: Author): void {
  if (author.githubId === null || author.githubLogin === null) {
    f.add('not_linked', '$', 'sign in with GitHub to publish: this account is not linked to a GitHub account');
  }
}

async function checkEndpoint(f: Findings, doc: JsonObject, s: PublishSettings): Promise<void> {
  const runtime = isJsonObject(doc.runtime) ? doc.runtime : undefined;
  if (!runtime) return;
  if (runtime.kind !== undefined && runtime.kind !== 'mcp' && runtime.kind !== 'webhook' && runtime.kind !== 'a2a') {
    f.add('invalid', '$.runtime.kind', 'must be mcp, webhook or a2a: a published agent runs on its author’s server');
  }
  const endpoint = runtime.endpoint;
  if (typeof endpoint !== 'string') return;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return; // the manifest validator reports it
  }
  const path = '$.runtime.endpoint';
  if (url.username !== '' || url.password !== '') {
    f.add('invalid', path, 'must not contain a user name or password');
    return;
  }
  if (url.protocol !== 'https:' && !(s.allowPrivate && url.protocol === 'http:')) {
    f.add('invalid', path, 'must be an https URL');
    return;
  }
  try {
    await assertPublicUrl(endpoint, s.allowPrivate, { path, ...(s.lookup ? { lookup: s.lookup } : {}) });
  } catch (e) {
    if (!(e instanceof HolonError)) throw e;
    f.addAll('invalid', e.problems);
  }
}

/**
 * An a2a version's card (./a2a-card.ts), once its endpoint passed: the card to keep, or a finding refusing it.
 */
async function checkCard(f: Findings, doc: JsonObject, s: PublishSettings): Promise<unknown> {
  const runtime = isJsonObject(doc.runtime) ? doc.runtime : undefined;
  if (runtime?.kind !== 'a2a' || typeof runtime.endpoint !== 'string' || f.has('$.runtime.endpoint')) return undefined;
  const skill = typeof runtime.skill === 'string' ? runtime.skill : undefined;
  const checked = await checkA2aCard(runtime.endpoint, skill, { allowPrivate: s.allowPrivate, ...(s.lookup ? { lookup: s.lookup } : {}) });
  if ('card' in checked) return checked.card;
  f.add('invalid', '$.runtime.endpoint', checked.problem);
  return undefined;
}

/** `https://github.com/<owner>/<repo>` → its two names (the validator checked the pattern), or null. */
function repositoryNames(doc: JsonObject): { owner: string; repo: string } | null {
  const repository = isJsonObject(doc.source) ? doc.source.repository : undefined;
  if (typeof repository !== 'string') return null;
  const m = /^https:\/\/github\.com\/([A-Za-z0-9][A-Za-z0-9-]{0,38})\/([A-Za-z0-9._-]{1,100})$/.exec(repository);
  if (!m || m[2] === '.' || m[2] === '..') return null;
  return { owner: m[1]!, repo: m[2]!.replace(/\.git$/, '') };
}

/**
 * An open-source version's repository: public, owned by the author's GitHub account (by id: logins can be renamed)
 * or by an organisation that lists the author as a public member. The repository as GitHub names it, or null.
 */
async function checkRepository(f: Findings, doc: JsonObject, author: Author, github: GitHubSettings): Promise<string | null> {
  if (doc.license === undefined || doc.license === 'proprietary') return null;
  const path = '$.source.repository';
  if (!isJsonObject(doc.source) || doc.source.repository === undefined) {
    f.add('invalid', path, 'is required to publish an open-source version: the public GitHub repository of its code');
    return null;
  }
  const names = repositoryNames(doc);
  if (!names || author.githubId === null || author.githubLogin === null) return null; // reported elsewhere
  try {
    const repo = await readRepository(github, names.owner, names.repo);
    if (!repo) {
      f.add('invalid', path, `${names.owner}/${names.repo} is not a public GitHub repository (GitHub does not show it)`);
      return null;
    }
    if (repo.private) {
      f.add('invalid', path, `${repo.fullName} is private: only a public repository can be listed as open source`);
      return null;
    }
    if (repo.owner.type === 'Organization') {
      if (!(await isPublicMember(github, repo.owner.login, author.githubLogin))) {
        f.add(
          'invalid',
          path,
          `${repo.fullName} belongs to the organisation ${repo.owner.login}, which does not list ${author.githubLogin} as a public member`,
        );
        return null;
      }
    } else if (repo.owner.id !== author.githubId) {
      f.add('invalid', path, `${repo.fullName} belongs to ${repo.owner.login}, not to your GitHub account ${author.githubLogin}`);
      return null;
    }
    return repo.fullName;
  } catch (e) {
    if (!(e instanceof GitHubUnavailable)) throw e;
    const down = e.reason === 'no_answer';
    f.add(down ? 'github_down' : 'github_error', path, `could not be checked: ${e.message}`);
    return null;
  }
}

async function checkVersionFree(f: Findings, ctx: Ctx, doc: JsonObject): Promise<void> {
  if (typeof doc.id !== 'string' || typeof doc.version !== 'string') return;
  const used =
    ctx.registry.get(doc.id, doc.version) !== undefined ||
    (await ctx.db('published_versions').where({ agent_id: doc.id, version: doc.version }).first('agent_id')) !== undefined;
  if (used) f.add('taken', '$.version', `${doc.id}@${doc.version} was published before; a version number is never reused, even after a yank`);
}

/** Check every condition, then list the version (201) or refuse it, naming every failed condition. */
export async function publishVersion(ctx: Ctx, s: PublishSettings, handle: string, doc: unknown): Promise<Published> {
  const github = s.github;
  if (!github) {
    throw new HolonError('publishing_off', 'publishing is off on this gateway: it needs a GitHub app (HOLON_GITHUB_CLIENT_ID and HOLON_GITHUB_CLIENT_SECRET)');
  }
  const f = new Findings();
  const author = await readAuthor(ctx, handle);
  const record = isJsonObject(doc) ? doc : {};
  checkNamespace(f, record, handle);
  checkLinked(f, author);
  const v = validateManifest(doc, { resolveUpstream: listedUpstream(ctx) });
  if (!v.ok) f.addAll('invalid', v.problems);
  await checkEndpoint(f, record, s);
  const a2aCard = v.ok ? await checkCard(f, record, s) : undefined;
  await checkVersionFree(f, ctx, record);
  const repository = await checkRepository(f, record, author, github);
  f.decide();
  if (!v.ok) throw new Error('unreachable: an invalid manifest is a finding');

  const manifest = v.manifest;
  const suites = s.suites?.(manifest.capabilities) ?? [];
  let queued: EvaluationRow[] = [];
  const outcome = await recordPublished(
    ctx,
    { manifest, author: handle, ...(repository ? { repository } : {}), ...(a2aCard !== undefined ? { a2aCard } : {}) },
    async (trx) => {
      queued = await queueEvaluations(trx, { agentId: manifest.id, version: manifest.version }, suites);
    },
  );
  if (outcome === 'version_taken') {
    f.add('taken', '$.version', `${manifest.id}@${manifest.version} was just published by another request`);
    f.decide();
  }
  await wakeEvaluators(
    ctx,
    queued.map((e) => e.id),
  );
  ctx.log.info({ agent: manifest.id, version: manifest.version, author: handle, repository, evaluations: queued.length }, 'version published');
  return {
    agent: manifest.id,
    version: manifest.version,
    author: handle,
    license: manifest.license,
    source: isOpenSource(manifest) && repository ? { repository } : 'proprietary',
    listed: true,
    evaluation: { status: queued.length ? 'pending' : 'none', suites: queued.map((e) => e.capability) },
  };
}

/**
 * The author's yank (`DELETE /v0/agents/{ns}/{name}@{version}`): the version stops being listed, its number stays
 * taken, admitted calls and fork royalties still settle. Only the account that published it: anything else is a 404,
 * as if it did not exist.
 */
export async function yankOwnVersion(ctx: Ctx, handle: string, agentId: string, version: string): Promise<Yanked> {
  const row = (await ctx.db('published_versions').where({ agent_id: agentId, version }).first('author')) as { author: string } | undefined;
  if (!row || row.author !== handle) throw new HolonError('not_found', `you have not published ${agentId.slice(0, 200)}@${version.slice(0, 100)}`);
  return yankVersion(ctx, agentId, version, { reason: 'yanked by its author', by: handle });
}
