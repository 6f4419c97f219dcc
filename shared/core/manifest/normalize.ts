/**
 * Build the normalized `Manifest` from a document that passed every check (validate.ts).
 * Only called on valid documents, so field types are known; amounts and rates are parsed again
 * with the money module (never floating point).
 */
import { parseAmount, type Micros } from '../money.js';
import { parseForkedFrom, parseRoyalty } from './rules/lineage.js';
import { DEFAULT_TIMEOUT_S } from './rules/runtime.js';
import type { CallSlot, ChargeOn, DataPolicy, DeclaredError, DownstreamMode, Manifest, PricingModel, Retention, RuntimeKind } from './types.js';
import type { JsonObject } from '../json.js';

/** Currency given to a `free` agent that declares none (all its amounts are 0). */
const FREE_DEFAULT_CURRENCY = 'EUR';

type Obj = JsonObject;
const obj = (v: unknown): Obj => v as Obj;
const str = (v: unknown): string => v as string;
const optAmount = (v: unknown): Micros | undefined => (v === undefined ? undefined : parseAmount(v));

export function normalizeManifest(doc: Obj): Manifest {
  const id = str(doc.id);
  const [namespace, name] = id.split('/') as [string, string];
  const iface = obj(doc.interface);
  const pricing = obj(doc.pricing);
  const runtime = obj(doc.runtime);
  const forks = doc.forks === undefined ? {} : obj(doc.forks);

  const manifest: Manifest = {
    id,
    namespace,
    name,
    version: str(doc.version),
    summary: str(doc.summary),
    capabilities: [...(doc.capabilities as string[])],
    license: str(doc.license),
    forks: {
      minRoyalty: forks.min_royalty === undefined ? { num: 0n, den: 1n } : rate(forks.min_royalty),
      allowed: forks.allowed !== false,
    },
    interface: {
      input: obj(iface.input),
      output: obj(iface.output),
      ...(iface.stream === undefined ? {} : { stream: { chunk: obj(obj(iface.stream).chunk) } }),
      errors: declaredErrors(iface.errors),
      examples: ((iface.examples as Obj[] | undefined) ?? []).map((e) => ({
        input: e.input,
        ...(e.output !== undefined ? { output: e.output } : {}),
        ...(e.error !== undefined ? { error: str(e.error) } : {}),
      })),
    },
    pricing: {
      model: pricing.model as PricingModel,
      currency: pricing.currency === undefined ? FREE_DEFAULT_CURRENCY : str(pricing.currency),
      ...defined('amount', optAmount(pricing.amount)),
      ...defined('unit', pricing.unit as string | undefined),
      ...defined('max', optAmount(pricing.max)),
      chargeOn: (pricing.charge_on as ChargeOn | undefined) ?? 'success',
    },
    calls: ((doc.calls as Obj[] | undefined) ?? []).map(
      (c): CallSlot => ({
        ...defined('capability', c.capability as string | undefined),
        ...defined('agent', c.agent as string | undefined),
        maxCost: parseAmount(c.max_cost),
      }),
    ),
    runtime: {
      kind: runtime.kind as RuntimeKind,
      ...defined('endpoint', runtime.endpoint as string | undefined),
      ...defined('tool', runtime.tool as string | undefined),
      ...defined('skill', runtime.skill as string | undefined),
      timeoutS: (obj(runtime.limits ?? {}).timeout_s as number | undefined) ?? DEFAULT_TIMEOUT_S,
    },
    doc,
  };

  if (doc.description !== undefined) manifest.description = str(doc.description);
  if (doc.source !== undefined) manifest.source = { repository: str(obj(doc.source).repository) };
  if (doc.lineage !== undefined) {
    const lineage = obj(doc.lineage);
    manifest.lineage = { forkedFrom: parseForkedFrom(str(lineage.forked_from))!, royalty: rate(lineage.royalty) };
  }
  if (doc.downstream !== undefined) {
    const ds = obj(doc.downstream);
    manifest.downstream = { mode: ds.mode as DownstreamMode, ...defined('cap', optAmount(ds.cap)) };
  }
  if (doc.data !== undefined) manifest.data = dataPolicy(obj(doc.data));
  return manifest;
}

function rate(value: unknown) {
  const r = parseRoyalty(value);
  if (!r.ok) throw new Error(`normalizeManifest called on an invalid rate: ${r.message}`);
  return r.value;
}

/** `{key: value}` when value is defined, else `{}` (keeps absent fields absent). */
function defined<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** A null-prototype map, so that `errors["constructor"]` is never mistaken for a declared code. */
function declaredErrors(value: unknown): Record<string, DeclaredError> {
  const out = Object.create(null) as Record<string, DeclaredError>;
  for (const [code, e] of Object.entries(obj(value ?? {}))) {
    out[code] = { description: str(obj(e).description), billed: obj(e).billed === true };
  }
  return out;
}

function dataPolicy(data: Obj): DataPolicy {
  const out: DataPolicy = {};
  if (typeof data.retention === 'string') {
    const retention: Retention = data.retention === 'none' ? { kind: 'none' } : { kind: 'days', days: Number.parseInt(data.retention, 10) };
    out.retention = retention;
  }
  if (Array.isArray(data.region)) out.region = [...new Set((data.region as string[]).map((r) => r.toLowerCase()))];
  if (typeof data.training === 'boolean') out.training = data.training;
  if (Array.isArray(data.subprocessors)) out.subprocessors = [...(data.subprocessors as string[])];
  return out;
}
