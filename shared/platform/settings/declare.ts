/**
 * How a setting is declared, once: its environment variable, how its text is read and checked, its default, the
 * roles that read it and one sentence. The `Config` type (index.ts), the parser (parse.ts), the production rules
 * (production.ts) and docs/configuration.md (scripts/config-docs.ts) all come from the declarations of this folder.
 */
import path from 'node:path';
import { tryParseAmount } from '../../core/money.js';
import { MIN_SECRET_LENGTH } from '../../core/secret-strength.js';
import { nonEmpty, parseDurations, splitList } from './text.js';

/**
 * Who reads a setting. The four roles (`holon serve` runs all four, so it reads what any of them reads);
 * `serve`: only `holon serve` itself (the dev gateway's own conveniences); the other commands of the CLI; the
 * reference MCP agent host (agents/host.mjs, and the tools it runs); the image's entrypoint (infra/entrypoint.sh).
 */
export type Reader =
  | 'api'
  | 'runner'
  | 'settler'
  | 'evaluator'
  | 'serve'
  | 'backup, restore, audit'
  | 'publish, credential, earnings, payout'
  | 'agent host'
  | 'entrypoint';

export const ROLES: readonly Reader[] = ['api', 'runner', 'settler', 'evaluator'];

/** The section of docs/configuration.md a setting is listed in. */
export type Section = 'gateway' | 'hosted' | 'webhooks' | 'payments' | 'observability' | 'tools';

/** A setting's value is wrong: the gateway does not start, and the message lists every problem. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** What reading one variable may consult besides its text: production mode, and where a problem goes. */
export interface ReadContext {
  readonly production: boolean;
  problem(text: string): void;
}

/** What a production rule may look at besides the value: the variable's text, and the agents left out. */
interface ProductionFacts {
  raw: string | undefined;
  exclude: readonly string[];
}

interface ProductionRule<V> {
  /** Production refuses to start while the variable is unset (blank, and no command-line override): `production needs <VAR> <needs>`. */
  needs?: string;
  /** Any other rule production holds the value to: a problem, or undefined. */
  check?(value: V, facts: ProductionFacts): string | undefined;
  /** What `check` refuses, for docs/configuration.md: "with …" or "without …". */
  refuses?: string;
}

/** What docs/configuration.md prints of a setting. */
export interface Documented {
  readonly env: string;
  /** Where docs/configuration.md lists it; a file of declarations sets it for all of its own (inSection). */
  readonly section?: Section;
  readonly roles: readonly Reader[];
  /** One sentence: what it does (Markdown; no `|`). */
  readonly doc: string;
  /** The default in words, as docs/configuration.md prints it; '' when there is none (off, or unset). */
  readonly shown: string;
  /** The allowed range, for a number. */
  readonly bounds?: { min: number; max: number };
}

export interface Setting<V> extends Documented {
  readonly default: V;
  /** The value of the variable's text (undefined when unset); a problem goes to `ctx.problem`, never echoing a secret. */
  readonly read: (raw: string | undefined, ctx: ReadContext) => V;
  readonly production?: ProductionRule<V>;
  /** A secret production compares with the others; `generated`: it must look random too (shared/core/secret-strength.ts). */
  readonly secret?: { generated: boolean };
  /** A command-line override replaces the variable's text and is checked like it, instead of only replacing its value. */
  readonly overrideWins?: boolean;
}

interface Common<V> {
  env: string;
  roles: readonly Reader[];
  doc: string;
  /** The default in words, when the value alone does not say it. */
  shown?: string;
  section?: Section;
  production?: ProductionRule<V>;
  overrideWins?: boolean;
}

/** A setting from its options and what its kind adds: the default, in words and as a value, and how its text is read. */
function declared<V>(o: Common<V>, kind: Pick<Setting<V>, 'shown' | 'default' | 'read' | 'bounds' | 'secret'>): Setting<V> {
  const { env, roles, doc, section, production, overrideWins } = o;
  return {
    env,
    roles,
    doc,
    ...kind,
    shown: o.shown ?? kind.shown,
    ...(section ? { section } : {}),
    ...(production ? { production } : {}),
    ...(overrideWins ? { overrideWins } : {}),
  };
}

const code = (text: string) => `\`${text}\``;

const MB = 1_048_576;

function int(o: Common<number> & { default: number; min: number; max: number; unit?: 'bytes' }): Setting<number>;
function int(o: Common<number | undefined> & { min: number; max: number }): Setting<number | undefined>;
function int(o: Common<never> & { default?: number; min: number; max: number; unit?: 'bytes' }): Setting<number | undefined> {
  const { min, max } = o;
  const shown = o.default === undefined ? '' : o.unit === 'bytes' && o.default >= MB ? `${o.default} (${o.default / MB} MB)` : String(o.default);
  return declared(o, {
    shown,
    default: o.default,
    read: (raw, ctx) => {
      const v = nonEmpty(raw);
      if (v === undefined) return o.default;
      const n = Number(v);
      if (/^[0-9]+$/.test(v) && n >= min && n <= max) return n;
      ctx.problem(`${o.env} must be an integer from ${min} to ${max}, not ${JSON.stringify(v)}`);
      return o.default ?? min;
    },
    bounds: { min, max },
  });
}

/** A pattern the text, when set, must match, and the rest of the sentence saying so (`<VAR> must …`); the value is kept either way. */
interface Shape {
  pattern?: RegExp;
  mustBe?: string;
}

function string(o: Common<string> & Shape & { default: string }): Setting<string>;
function string(o: Common<string | undefined> & Shape): Setting<string | undefined>;
function string(o: Common<never> & Shape & { default?: string }): Setting<string | undefined> {
  return declared(o, {
    shown: o.default ? code(o.default) : '',
    default: o.default,
    read: (raw, ctx) => {
      const v = nonEmpty(raw);
      if (v !== undefined && o.pattern && !o.pattern.test(v)) ctx.problem(`${o.env} ${o.mustBe}`);
      return v ?? o.default;
    },
  });
}

/** A file or directory, resolved against the working directory. */
function file(o: Common<string> & { default: string }): Setting<string>;
function file(o: Common<string | undefined>): Setting<string | undefined>;
function file(o: Common<never> & { default?: string }): Setting<string | undefined> {
  return declared(o, {
    shown: o.default ? code(o.default) : '',
    default: o.default,
    read: (raw) => {
      const v = nonEmpty(raw) ?? o.default;
      return v === undefined ? undefined : path.resolve(v);
    },
  });
}

/** Comma-separated; `emptyIsNone`: set but blank means an empty list, not the default. */
function list(o: Common<string[]> & { default: readonly string[]; emptyIsNone?: boolean }): Setting<string[]> {
  return declared(o, {
    shown: code(o.default.join(',')),
    default: [...o.default],
    read: (raw) => {
      if (o.emptyIsNone ? raw === undefined : nonEmpty(raw) === undefined) return [...o.default];
      return splitList(raw!);
    },
  });
}

/** `1` or `0`, nothing else; `meaning` says what `1` does, in the problem. */
function flag(o: Common<boolean> & { meaning: string }): Setting<boolean> {
  return declared(o, {
    shown: '0',
    default: false,
    read: (raw, ctx) => {
      const v = nonEmpty(raw);
      if (v === undefined || v === '0') return false;
      if (v === '1') return true;
      ctx.problem(`${o.env} must be 1 (${o.meaning}) or 0, not ${JSON.stringify(v)}`);
      return false;
    },
  });
}

/** On or off by default; any of `flips` (any case) turns it the other way, any other text leaves the default. */
function toggle(o: Common<boolean> & { default: boolean; flips: readonly string[] }): Setting<boolean> {
  return declared(o, {
    shown: o.default ? '1' : '0',
    default: o.default,
    read: (raw) => {
      const v = nonEmpty(raw);
      return v !== undefined && o.flips.includes(v.toLowerCase()) ? !o.default : o.default;
    },
  });
}

/** True when the variable is exactly `value` (as `NODE_ENV=production`). */
function is(o: Common<boolean> & { value: string }): Setting<boolean> {
  return declared(o, { shown: '', default: false, read: (raw) => raw === o.value });
}

/** An absolute http(s) URL without credentials, https in production; trailing slashes dropped. */
function url(o: Common<string> & { default: string }): Setting<string>;
function url(o: Common<string | undefined>): Setting<string | undefined>;
function url(o: Common<never> & { default?: string }): Setting<string | undefined> {
  return declared(o, {
    shown: o.default ? code(o.default) : '',
    default: o.default,
    read: (raw, ctx) => {
      const v = nonEmpty(raw);
      if (v === undefined) return o.default;
      let u: URL;
      try {
        u = new URL(v);
      } catch {
        ctx.problem(`${o.env} must be an absolute URL such as https://example.com, not ${JSON.stringify(v)}`);
        return o.default;
      }
      if (u.protocol !== 'https:' && u.protocol !== 'http:') ctx.problem(`${o.env} must be an http(s) URL, not ${JSON.stringify(v)}`);
      else if (ctx.production && u.protocol !== 'https:') ctx.problem(`${o.env} must be an https URL in production, not ${JSON.stringify(v)}`);
      else if (u.username || u.password) ctx.problem(`${o.env} must not contain credentials`);
      else return v.replace(/\/+$/, '');
      return o.default;
    },
  });
}

/** An http(s) endpoint taken as it is (an OTLP collector). */
function endpoint(o: Common<string | undefined>): Setting<string | undefined> {
  return declared(o, {
    shown: '',
    default: undefined,
    read: (raw, ctx) => {
      const v = nonEmpty(raw);
      if (v !== undefined && !/^https?:\/\/[^\s/]+/.test(v))
        ctx.problem(`${o.env} must be an http(s) URL such as http://otel-collector:4318, not ${JSON.stringify(v)}`);
      return v;
    },
  });
}

/**
 * A secret: never echoed in a problem. `minLength`: at least MIN_SECRET_LENGTH characters, always or in production
 * only; `shape`: a pattern it must match, else it is dropped with the sentence given; `generated`: production also
 * wants it to look random (production.ts).
 */
function secret(
  o: Common<string | undefined> & { generated: boolean; minLength?: 'always' | 'production'; shape?: { pattern: RegExp; problem: string } },
): Setting<string | undefined> {
  const read = (raw: string | undefined, ctx: ReadContext) => {
    const v = nonEmpty(raw);
    if (v === undefined) return undefined;
    if (o.shape && !o.shape.pattern.test(v)) {
      ctx.problem(o.shape.problem);
      return undefined;
    }
    if ((o.minLength === 'always' || (o.minLength === 'production' && ctx.production)) && v.length < MIN_SECRET_LENGTH)
      ctx.problem(`${o.env} must be at least ${MIN_SECRET_LENGTH} random characters (it has ${v.length})`);
    return v;
  };
  return declared(o, { shown: '', default: undefined, read, secret: { generated: o.generated } });
}

/** An amount of money (`5.00`), in micro-units. */
function amount(o: Common<bigint> & { default: string }): Setting<bigint> {
  const fallback = tryParseAmount(o.default);
  if (!fallback.ok) throw new Error(`${o.env}: default ${o.default} ${fallback.message}`);
  return declared(o, {
    shown: code(o.default),
    default: fallback.value,
    read: (raw, ctx) => {
      const v = nonEmpty(raw);
      if (v === undefined) return fallback.value;
      const r = tryParseAmount(v);
      if (r.ok) return r.value;
      ctx.problem(`${o.env} ${r.message}`);
      return fallback.value;
    },
  });
}

/** Delays (`0,5s,5m,…`, see text.ts), in milliseconds: 1 to `maxItems` of them, none above `maxMs`. */
function durations(o: Common<readonly number[]> & { default: string; maxItems: number; maxMs: number; limits: string }): Setting<readonly number[]> {
  const fallback = parseDurations(o.default);
  if (!fallback) throw new Error(`${o.env}: default ${o.default} is not a list of durations`);
  return declared(o, {
    shown: code(o.default),
    default: fallback,
    read: (raw, ctx) => {
      const text = nonEmpty(raw) ?? o.default;
      const ms = parseDurations(text);
      if (ms && ms.length <= o.maxItems && !ms.some((d) => d > o.maxMs)) return ms;
      ctx.problem(`${o.env} must be ${o.limits} such as ${o.default}, not ${JSON.stringify(text)}`);
      return ms && ms.length <= o.maxItems ? ms : fallback;
    },
  });
}

/** Read by a program other than the gateway (a client command of the CLI, the agent host): declared for the docs. */
function elsewhere(o: { env: string; roles: readonly Reader[]; doc: string; shown?: string }): Documented {
  return { env: o.env, roles: o.roles, doc: o.doc, shown: o.shown ?? '' };
}

export const setting = { int, string, file, list, flag, toggle, is, url, endpoint, secret, amount, durations, elsewhere };

/** A tree of declarations: a `Config` field per setting, nested objects for the grouped ones (`webhooks`, `rateLimits`). */
export interface Declarations {
  readonly [key: string]: Setting<unknown> | Declarations;
}

export function isSetting(v: Setting<unknown> | Declarations | Documented): v is Setting<unknown> {
  return typeof (v as Setting<unknown>).read === 'function';
}

/** The declarations of one file, each listed in `section` of docs/configuration.md unless it names its own. */
export function inSection<T extends Declarations | Readonly<Record<string, Documented>>>(section: Section, tree: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(tree)) {
    const leaf = typeof (v as Documented).env === 'string';
    out[key] = leaf ? { section, ...v } : inSection(section, v as Declarations);
  }
  return out as T;
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The value type a tree of declarations parses to: a setting without a default is an optional field. */
export type ConfigOf<T> = Simplify<
  {
    -readonly [K in keyof T as T[K] extends Setting<infer V> ? (undefined extends V ? never : K) : K]: T[K] extends Setting<infer V> ? V : ConfigOf<T[K]>;
  } & {
    -readonly [K in keyof T as T[K] extends Setting<infer V> ? (undefined extends V ? K : never) : never]?: T[K] extends Setting<infer V>
      ? Exclude<V, undefined>
      : never;
  }
>;

/** One setting's value in `env`, read alone (a CLI command, the dev gateway's defaults); a problem throws ConfigError. */
export function valueIn<V>(declared: Setting<V>, env: NodeJS.ProcessEnv): V {
  const problems: string[] = [];
  const value = declared.read(env[declared.env], { production: env.NODE_ENV === 'production', problem: (p) => problems.push(p) });
  if (problems.length) throw new ConfigError(problems.join('\n'));
  return value;
}
