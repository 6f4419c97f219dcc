/**
 * Validating a mandate document (spec/mandate.md §1–2) into a normalized `Mandate`, with EVERY problem
 * listed (JSON path + plain words), and writing a `Mandate` back to its wire form.
 *
 * Decisions where the spec is silent:
 * - Amounts and fractions are decimal strings only; JSON numbers are refused (as everywhere in money).
 * - Rates are normalized to the smallest power-of-ten denominator ("0.90" → 9/10), so a mandate
 *   written back and read again is equal field by field.
 * - `parent`, `depth` and `revoked` are kept by the gateway (sub-mandates, revocation). They are read
 *   so that a stored mandate round-trips; with `{ caller: true }` a document setting them is refused.
 * - A sub-mandate (`parent` set, depth ≥ 1) has id `<parent id>.<receipt id>` and its issuer is the
 *   parent's grantee, an agent id `ns/name`; a root mandate's issuer is an account handle.
 * - Receipt ids in mandate ids: 1–64 of A-Z a-z 0-9 '_' '-'.
 * - `allow`, `deny`, `require`, `approval`, `delegation` may be left out (nothing allowed / no extra
 *   rule); `budget` is required. Pattern lists hold at most 100 entries.
 * - `require.data.retention`: `none` or `"<n>d"` with 1 ≤ n ≤ 99999; regions: 2–16 of letters, digits
 *   and '-', compared case-insensitively; `require.license` lists compare case-insensitively and may
 *   name `proprietary`.
 * - `expires_at`: RFC 3339 with a time zone (`Z` or ±hh:mm); impossible dates (Feb 30, 24:00, leap
 *   second 60) are refused rather than rolled over.
 */
import { jsonPath, type Problem } from '../errors.js';
import { parseDocumentText } from '../documents.js';
import { formatAmount, formatRate, isCurrency, ONE_RATE, tryParseAmount, tryParseRate, type Micros, type Rate } from '../money.js';
import type { Retention } from '../manifest/types.js';
import type { DataRequirement, LicenseRequirement, Mandate } from './types.js';
import { agentPatternProblem, capabilityPatternProblem, isAgentId, isHandle } from './patterns.js';
import { isPayerWallet, isPaymentMandateId } from '../identifiers.js';
import type { JsonObject } from '../json.js';

const MAX_DELEGATION_DEPTH = 8;
const MAX_PATTERNS = 100;
export const RECEIPT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const SPDX_ID = /^[A-Za-z0-9][A-Za-z0-9.+-]{0,63}$/;
const REGION = /^[A-Za-z0-9][A-Za-z0-9-]{1,15}$/;
const RETENTION_DAYS = /^([1-9][0-9]{0,4})d$/;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

export type MandateValidation = { ok: true; mandate: Mandate; problems: [] } | { ok: false; problems: Problem[] };
export interface ValidateOptions {
  /** The document comes from a caller: fields the gateway keeps (parent, depth, revoked) are refused. */
  caller?: boolean;
}

type Path = ReadonlyArray<string | number>;
type Doc = JsonObject;

const FIELDS = {
  top: ['id', 'issuer', 'grantee', 'parent', 'depth', 'allow', 'deny', 'require', 'approval', 'budget', 'delegation', 'expires_at', 'revoked'],
  allow: ['capabilities', 'agents', 'published'],
  deny: ['capabilities', 'agents'],
  require: ['license', 'data', 'evaluated', 'min_success_rate'],
  data: ['retention', 'region', 'training'],
  approval: ['above', 'agents', 'first_use'],
  budget: ['total', 'currency', 'per_call', 'fx'],
  delegation: ['max_depth'],
} as const;
const GATEWAY_FIELDS = ['parent', 'depth', 'revoked'];

/** Collects problems; each reader returns the value, or undefined after reporting why not. */
class Reader {
  readonly problems: Problem[] = [];

  add(path: Path, message: string): undefined {
    this.problems.push({ path: jsonPath(...path), message });
    return undefined;
  }

  /** An object; every key outside `known` is reported (`known` null: any key, e.g. a map). */
  object(value: unknown, path: Path, known: readonly string[] | null): Doc | undefined {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return this.add(path, `must be an object, not ${describe(value)}`);
    for (const key of Object.keys(value)) {
      if (key.includes('\u0000')) this.add(path, 'a field name contains a NUL character');
      else if (known && !known.includes(key)) this.add([...path, key], `is not a known field (known: ${known.join(', ')})`);
    }
    return value as Doc;
  }

  string(value: unknown, path: Path): string | undefined {
    if (typeof value !== 'string') return this.add(path, `must be a string, not ${describe(value)}`);
    if (value.includes('\u0000')) return this.add(path, 'contains a NUL character');
    return value;
  }

  boolean(value: unknown, path: Path, fallback: boolean): boolean | undefined {
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') return this.add(path, `must be true or false, not ${describe(value)}`);
    return value;
  }

  integer(value: unknown, path: Path, min: number, max: number): number | undefined {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      return this.add(path, `must be a whole number from ${min} to ${max}, not ${describe(value)}`);
    }
    return value;
  }

  list<T>(value: unknown, path: Path, each: (item: unknown, path: Path) => T | undefined, max = MAX_PATTERNS): T[] | undefined {
    if (value === undefined) return [];
    if (!Array.isArray(value)) return this.add(path, `must be a list, not ${describe(value)}`);
    if (value.length > max) return this.add(path, `has ${value.length} entries; at most ${max} are allowed`);
    const out: T[] = [];
    let bad = false;
    value.forEach((item, i) => {
      const v = each(item, [...path, i]);
      if (v === undefined) bad = true;
      else out.push(v);
    });
    return bad ? undefined : out;
  }

  patterns(value: unknown, path: Path, kind: 'capability' | 'agent'): string[] | undefined {
    return this.list(value, path, (item, p) => {
      const s = this.string(item, p);
      if (s === undefined) return undefined;
      const problem = kind === 'agent' ? agentPatternProblem(s) : capabilityPatternProblem(s);
      return problem ? this.add(p, problem) : s;
    });
  }

  amount(value: unknown, path: Path): Micros | undefined {
    if (typeof value === 'string' && value.includes('\u0000')) return this.add(path, 'contains a NUL character');
    const r = tryParseAmount(value);
    return r.ok ? r.value : this.add(path, r.message);
  }

  rate(value: unknown, path: Path, options: Parameters<typeof tryParseRate>[1]): Rate | undefined {
    if (typeof value === 'string' && value.includes('\u0000')) return this.add(path, 'contains a NUL character');
    const r = tryParseRate(value, options);
    return r.ok ? normalizeRate(r.value) : this.add(path, r.message);
  }
}

/** The same value with the smallest power-of-ten denominator. */
export function normalizeRate(r: Rate): Rate {
  let { num, den } = r;
  while (den > 1n && num % 10n === 0n) {
    num /= 10n;
    den /= 10n;
  }
  return { num, den };
}

/** Depth of a mandate id: 0 for `<handle>/<name>`, +1 per `.<receipt id>`; null when malformed. */
function mandateIdDepth(id: string): number | null {
  const [root = '', ...receipts] = id.split('.');
  if (!(isAgentId(root) || isPaymentMandateId(root)) || !receipts.every((r) => RECEIPT_ID.test(r))) return null;
  return receipts.length;
}

export function validateMandate(doc: unknown, options: ValidateOptions = {}): MandateValidation {
  const r = new Reader();
  let top = r.object(doc, [], FIELDS.top);
  if (!top) return { ok: false, problems: r.problems };
  if (options.caller) {
    for (const f of GATEWAY_FIELDS) if (top[f] !== undefined) r.add([f], 'is kept by the gateway and cannot be set in a mandate document');
    // A caller's document is a root mandate: read the rest as one, whatever those fields said.
    top = Object.fromEntries(Object.entries(top).filter(([k]) => !GATEWAY_FIELDS.includes(k)));
  }

  const identity = readIdentity(r, top);
  const allow = readAllow(r, top.allow);
  const deny = readDeny(r, top.deny);
  const require = readRequire(r, top.require);
  const approval = readApproval(r, top.approval);
  const budget = readBudget(r, top.budget);
  const delegation = top.delegation === undefined ? {} : r.object(top.delegation, ['delegation'], FIELDS.delegation);
  const maxDepth = delegation?.max_depth === undefined ? 1 : r.integer(delegation.max_depth, ['delegation', 'max_depth'], 0, MAX_DELEGATION_DEPTH);
  const expiresAt = top.expires_at === undefined ? undefined : readTimestamp(r, top.expires_at, ['expires_at']);
  const revoked = r.boolean(top.revoked, ['revoked'], false);

  if (r.problems.length > 0) return { ok: false, problems: r.problems };
  const mandate: Mandate = {
    ...identity!.names,
    allow: allow!,
    deny: deny!,
    require: require!,
    approval: approval!,
    budget: budget!,
    delegation: { maxDepth: maxDepth! },
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    revoked: revoked!,
    depth: identity!.depth,
    ...(identity!.parent !== undefined ? { parent: identity!.parent } : {}),
  };
  return { ok: true, mandate, problems: [] };
}

interface Identity {
  names: { id: string; issuer: string; grantee: string };
  depth: number;
  parent?: string;
}

function readIdentity(r: Reader, top: Doc): Identity | undefined {
  const before = r.problems.length;
  const depth = top.depth === undefined ? 0 : r.integer(top.depth, ['depth'], 0, MAX_DELEGATION_DEPTH);
  const parent = top.parent === undefined ? undefined : r.string(top.parent, ['parent']);
  const sub = top.parent !== undefined || (depth ?? 0) > 0;
  const id = required(r, top, 'id');
  const issuer = required(r, top, 'issuer');
  const grantee = required(r, top, 'grantee');

  if (!sub) {
    // A payment's mandate (shared/payments/paid-mandate.ts) is issued by the paying wallet, `x402:<address>`.
    const rootName = (v: string) => isAgentId(v) || (issuer !== undefined && isPayerWallet(issuer) && isPaymentMandateId(v));
    if (issuer !== undefined && !isHandle(issuer) && !isPayerWallet(issuer))
      r.add(['issuer'], `"${issuer}" is not an account handle: 2–39 of a-z, 0-9 and '-', not starting or ending with '-'`);
    if (id !== undefined) {
      if (!rootName(id)) r.add(['id'], `"${id}" is not a mandate id: <issuer>/<name>, each part 2–39 of a-z, 0-9 and '-'`);
      else if (issuer !== undefined && !id.startsWith(`${issuer}/`)) r.add(['id'], `must start with the issuer: "${issuer}/<name>"`);
    }
    if (grantee !== undefined) {
      if (!rootName(grantee)) r.add(['grantee'], `"${grantee}" is not <handle>/<name>`);
      else if (issuer !== undefined && !grantee.startsWith(`${issuer}/`)) r.add(['grantee'], `must be in the issuer's namespace: "${issuer}/<name>"`);
    }
  } else {
    if (top.parent === undefined) r.add(['parent'], 'is required for a sub-mandate (depth 1 or more)');
    if (depth === 0) r.add(['depth'], 'must be 1 or more for a sub-mandate (one with a parent)');
    const parentDepth = parent === undefined ? null : mandateIdDepth(parent);
    if (parent !== undefined && parentDepth === null) r.add(['parent'], `"${parent}" is not a mandate id`);
    if (parentDepth !== null && depth !== undefined && depth > 0 && parentDepth !== depth - 1) {
      r.add(['depth'], `must be one more than the parent's depth (${parentDepth})`);
    }
    if (id !== undefined && parent !== undefined) {
      const rest = id.startsWith(`${parent}.`) ? id.slice(parent.length + 1) : null;
      if (rest === null || !RECEIPT_ID.test(rest)) r.add(['id'], `a sub-mandate's id must be "${parent}.<receipt id>"`);
    }
    if (issuer !== undefined && !isAgentId(issuer))
      r.add(['issuer'], `"${issuer}" is not an agent id <ns>/<name> (a sub-mandate's issuer is the parent's grantee)`);
    if (grantee !== undefined && !isAgentId(grantee)) r.add(['grantee'], `"${grantee}" is not an agent id <ns>/<name>`);
  }
  if (r.problems.length > before) return undefined;
  return { names: { id: id!, issuer: issuer!, grantee: grantee! }, depth: depth!, ...(parent !== undefined ? { parent } : {}) };
}

function required(r: Reader, doc: Doc, field: string): string | undefined {
  return doc[field] === undefined ? r.add([field], 'is required') : r.string(doc[field], [field]);
}

function readAllow(r: Reader, value: unknown): Mandate['allow'] | undefined {
  const o = value === undefined ? {} : r.object(value, ['allow'], FIELDS.allow);
  if (!o) return undefined;
  const capabilities = r.patterns(o.capabilities, ['allow', 'capabilities'], 'capability');
  const agents = r.patterns(o.agents, ['allow', 'agents'], 'agent');
  const published = r.boolean(o.published, ['allow', 'published'], false);
  return capabilities && agents && published !== undefined ? { capabilities, agents, published } : undefined;
}

function readDeny(r: Reader, value: unknown): Mandate['deny'] | undefined {
  const o = value === undefined ? {} : r.object(value, ['deny'], FIELDS.deny);
  if (!o) return undefined;
  const capabilities = r.patterns(o.capabilities, ['deny', 'capabilities'], 'capability');
  const agents = r.patterns(o.agents, ['deny', 'agents'], 'agent');
  return capabilities && agents ? { capabilities, agents } : undefined;
}

function readRequire(r: Reader, value: unknown): Mandate['require'] | undefined {
  const o = value === undefined ? {} : r.object(value, ['require'], FIELDS.require);
  if (!o) return undefined;
  const before = r.problems.length;
  const license = readLicense(r, o.license);
  const data = o.data === undefined ? undefined : readData(r, o.data);
  const evaluated = r.boolean(o.evaluated, ['require', 'evaluated'], false);
  const minSuccessRate =
    o.min_success_rate === undefined ? undefined : r.rate(o.min_success_rate, ['require', 'min_success_rate'], { maxDecimals: 4, atMost: ONE_RATE });
  if (r.problems.length > before) return undefined;
  return {
    license: license!,
    ...(data !== undefined ? { data } : {}),
    evaluated: evaluated!,
    ...(minSuccessRate !== undefined ? { minSuccessRate } : {}),
  };
}

function readLicense(r: Reader, value: unknown): LicenseRequirement | undefined {
  const path = ['require', 'license'];
  if (value === undefined) return 'any';
  if (value === 'any' || value === 'open-source') return value;
  if (!Array.isArray(value)) {
    const s = typeof value === 'string' ? r.string(value, path) : value;
    if (s === undefined) return undefined;
    if (typeof s === 'string' && SPDX_ID.test(s)) return r.add(path, `must be any, open-source or a list of SPDX ids: write [${s}] for one id`);
    return r.add(path, `must be any, open-source or a list of SPDX ids, not ${describe(s)}`);
  }
  if (value.length === 0) return r.add(path, 'must list at least one SPDX id (or be any)');
  return r.list(value, path, (item, p) => {
    const s = r.string(item, p);
    if (s === undefined) return undefined;
    return SPDX_ID.test(s) ? s : r.add(p, `"${s}" is not an SPDX license id such as MIT or Apache-2.0`);
  });
}

function readData(r: Reader, value: unknown): DataRequirement | undefined {
  const base = ['require', 'data'];
  const o = r.object(value, base, FIELDS.data);
  if (!o) return undefined;
  const before = r.problems.length;
  const out: DataRequirement = {};
  if (o.retention !== undefined) {
    const s = r.string(o.retention, [...base, 'retention']);
    const retention = s === undefined ? undefined : parseRetention(s);
    if (s !== undefined && !retention) r.add([...base, 'retention'], `"${s}" must be none or a number of days such as "30d" (1 to 99999)`);
    if (retention) out.retention = retention;
  }
  if (o.region !== undefined) {
    const region = r.list(o.region, [...base, 'region'], (item, p) => {
      const s = r.string(item, p);
      if (s === undefined) return undefined;
      return REGION.test(s) ? s : r.add(p, `"${s}" is not a region code such as eu, us or de`);
    });
    if (region && region.length === 0) r.add([...base, 'region'], 'must list at least one region');
    else if (region) out.region = region;
  }
  if (o.training !== undefined) {
    if (o.training === false) out.training = false;
    else
      r.add(
        [...base, 'training'],
        o.training === true
          ? 'only training: false can be required (it means: the agent must not train on inputs)'
          : `must be false, not ${describe(o.training)}`,
      );
  }
  return r.problems.length > before ? undefined : out;
}

function parseRetention(s: string): Retention | undefined {
  if (s === 'none') return { kind: 'none' };
  const m = RETENTION_DAYS.exec(s);
  return m ? { kind: 'days', days: Number(m[1]) } : undefined;
}

function readApproval(r: Reader, value: unknown): Mandate['approval'] | undefined {
  const o = value === undefined ? {} : r.object(value, ['approval'], FIELDS.approval);
  if (!o) return undefined;
  const before = r.problems.length;
  const above = o.above === undefined ? undefined : r.amount(o.above, ['approval', 'above']);
  const agents = r.patterns(o.agents, ['approval', 'agents'], 'agent');
  const firstUse = r.boolean(o.first_use, ['approval', 'first_use'], false);
  if (r.problems.length > before) return undefined;
  return { ...(above !== undefined ? { above } : {}), agents: agents!, firstUse: firstUse! };
}

function readBudget(r: Reader, value: unknown): Mandate['budget'] | undefined {
  if (value === undefined) return r.add(['budget'], 'is required: at least total and currency');
  const o = r.object(value, ['budget'], FIELDS.budget);
  if (!o) return undefined;
  const before = r.problems.length;
  const total = o.total === undefined ? r.add(['budget', 'total'], 'is required') : r.amount(o.total, ['budget', 'total']);
  const text = o.currency === undefined ? r.add(['budget', 'currency'], 'is required') : r.string(o.currency, ['budget', 'currency']);
  const currency =
    text === undefined || isCurrency(text)
      ? text
      : r.add(['budget', 'currency'], `must be a currency code such as EUR (three capital letters), not ${describe(text)}`);
  const perCall = o.per_call === undefined ? undefined : r.amount(o.per_call, ['budget', 'per_call']);
  const fx: Record<string, Rate> = {};
  const fxDoc = o.fx === undefined ? {} : r.object(o.fx, ['budget', 'fx'], null);
  for (const [code, rateText] of Object.entries(fxDoc ?? {})) {
    if (code.includes('\u0000')) continue; // reported by object()
    const path = ['budget', 'fx', code];
    if (!isCurrency(code)) r.add(path, `"${code}" is not a currency code such as USD`);
    else if (code === o.currency) r.add(path, `is the budget currency itself: no rate is needed into ${code}`);
    const rate = r.rate(rateText, path, { maxDecimals: 12, allowZero: false });
    if (rate && isCurrency(code)) fx[code] = rate;
  }
  if (r.problems.length > before) return undefined;
  return { total: total!, currency: currency!, ...(perCall !== undefined ? { perCall } : {}), fx };
}

/**
 * What is allowed but almost certainly not meant (`holon validate` flags it; the gateway accepts the mandate as
 * written): a `per_call` above `total` never binds, since every call must already fit in what is left of `total`
 * (a typo, most of the time: `per_call: "50.00"` under `total: "5.00"`).
 */
export function mandateWarnings(mandate: Mandate): Problem[] {
  const { perCall, total, currency } = mandate.budget;
  const out: Problem[] = [];
  if (perCall !== undefined && perCall > total) {
    out.push({
      path: jsonPath('budget', 'per_call'),
      message: `is ${formatAmount(perCall)} ${currency}, above the total of ${formatAmount(total)} ${currency}, so it never limits a call (each must already fit in what is left of the total): lower per_call, or raise total`,
    });
  }
  return out;
}

function readTimestamp(r: Reader, value: unknown, path: Path): number | undefined {
  const s = r.string(value, path);
  if (s === undefined) return undefined;
  const m = RFC3339.exec(s);
  const bad = `"${s.slice(0, 40)}" is not an RFC 3339 timestamp such as 2027-01-01T00:00:00Z`;
  if (!m) return r.add(path, bad);
  const [, y, mo, d, h, mi, sec, , , , oh, om] = m.map((x) => (x === undefined ? 0 : Number(x)));
  if (mo! < 1 || mo! > 12 || d! < 1 || d! > daysInMonth(y!, mo!) || h! > 23 || mi! > 59 || sec! > 59 || oh! > 23 || om! > 59) {
    return r.add(path, `${bad} (no such date or time)`);
  }
  const ms = Date.parse(s.toUpperCase());
  return Number.isNaN(ms) ? r.add(path, bad) : ms;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Read a mandate from YAML or JSON text. */
export function parseMandate(text: string, format?: 'json' | 'yaml', options: ValidateOptions = {}): MandateValidation {
  const doc = parseDocumentText(text, format);
  return doc.ok ? validateMandate(doc.value, options) : { ok: false, problems: doc.problems };
}

/** The wire form of a mandate (decimal strings, snake_case): `validateMandate(mandateToDoc(m))` gives `m` back. */
export function mandateToDoc(m: Mandate) {
  const { require: req, approval, budget } = m;
  const data = req.data && {
    ...(req.data.retention ? { retention: req.data.retention.kind === 'none' ? 'none' : `${req.data.retention.days}d` } : {}),
    ...(req.data.region ? { region: [...req.data.region] } : {}),
    ...(req.data.training === false ? { training: false } : {}),
  };
  return {
    id: m.id,
    issuer: m.issuer,
    grantee: m.grantee,
    ...(m.parent !== undefined ? { parent: m.parent } : {}),
    ...(m.depth !== 0 ? { depth: m.depth } : {}),
    allow: { capabilities: [...m.allow.capabilities], agents: [...m.allow.agents], published: m.allow.published },
    deny: { capabilities: [...m.deny.capabilities], agents: [...m.deny.agents] },
    require: {
      license: Array.isArray(req.license) ? [...req.license] : req.license,
      ...(data ? { data } : {}),
      evaluated: req.evaluated,
      ...(req.minSuccessRate ? { min_success_rate: formatRate(req.minSuccessRate) } : {}),
    },
    approval: {
      ...(approval.above !== undefined ? { above: formatAmount(approval.above) } : {}),
      agents: [...approval.agents],
      first_use: approval.firstUse,
    },
    budget: {
      total: formatAmount(budget.total),
      currency: budget.currency,
      ...(budget.perCall !== undefined ? { per_call: formatAmount(budget.perCall) } : {}),
      fx: Object.fromEntries(Object.entries(budget.fx).map(([c, rate]) => [c, formatRate(rate)])),
    },
    delegation: { max_depth: m.delegation.maxDepth },
    ...(m.expiresAt !== undefined ? { expires_at: new Date(m.expiresAt).toISOString() } : {}),
    ...(m.revoked ? { revoked: true } : {}),
  };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `"${value.slice(0, 40).replace(/\u0000/g, '\\0')}"`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return `a ${typeof value}`;
}
