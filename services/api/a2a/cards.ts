/**
 * The gateway's A2A agent cards (docs/a2a.md): one for each listed agent, at `/a2a/{ns}/{name}/.well-known/agent-card.json`,
 * and the gateway's own at `/.well-known/agent-card.json`, whose skills are capabilities (routed as `capability`
 * calls are). Each card names its JSON-RPC and HTTP+JSON interfaces, the bearer scheme (a Holon agent key, under its
 * mandate), and Holon's pricing extension: the price, the worst case and the measured record. Cards are written in
 * A2A's JSON form and signed (JWS over the SDK's canonical form, RFC 8785) with the key in `/.well-known/jwks.json`.
 */
import { canonicalizeAgentCard } from '@a2a-js/sdk';
import type { ServiceContext } from '../../../shared/context.js';
import { formatAmount } from '../../../shared/core/money.js';
import { ownWorstCase } from '../../../shared/core/pricing.js';
import type { AgentVersion } from '../../../shared/registry/agent-version.js';
import { X402_EXTENSION } from './paid.js';
import { EMPTY_SUMMARY, loadRecordSummaries, recordKey, type RecordSummary } from '../../../shared/catalogue/agent-record.js';

/** Holon's pricing extension: what a call costs, at most, and what runs cost per success so far. */
const PRICING_EXTENSION = 'https://holon.dev/a2a/extensions/pricing/v1';
/** The A2A protocol version the gateway speaks (the SDK's). */
const PROTOCOL_VERSION = '1.0';
/** The path of the gateway's own A2A interfaces: not an agent (`_` starts no namespace). */
export const GATEWAY_A2A_PATH = '/a2a/_gateway';
const KEY_SCHEME = 'holon_key';

/** A card in A2A's JSON form (what is served, canonicalized and signed). */
export type CardJson = Record<string, unknown> & { signatures?: unknown[] };

/** Where an agent's A2A interfaces are. */
const agentA2aPath = (id: string): string => `/a2a/${id}`;

function interfaces(base: string, path: string) {
  return [
    { url: `${base}${path}`, protocolBinding: 'JSONRPC', protocolVersion: PROTOCOL_VERSION },
    { url: `${base}${path}`, protocolBinding: 'HTTP+JSON', protocolVersion: PROTOCOL_VERSION },
  ];
}

const security = {
  securitySchemes: {
    [KEY_SCHEME]: {
      httpAuthSecurityScheme: {
        scheme: 'Bearer',
        bearerFormat: 'Holon agent key (hlk_a_…)',
        description: 'A Holon agent key: every call runs under its mandate (budget, allowed agents, approvals).',
      },
    },
  },
  securityRequirements: [{ schemes: { [KEY_SCHEME]: { list: [] } } }],
};

/** Payments from outside on: the a2a-x402 extension (a call paid per message, without a key; paid.ts). */
const paymentsExtension = (ctx: ServiceContext) =>
  ctx.payments
    ? [
        {
          uri: X402_EXTENSION,
          description: `Pay per call with x402 without a key (${ctx.payments.network}, ${ctx.payments.asset.currency}): the a2a-x402 standalone flow (docs/a2a.md)`,
          required: false,
        },
      ]
    : [];

const capabilities = (ctx: ServiceContext, extensions: unknown[]) => ({
  streaming: true,
  pushNotifications: true,
  extensions: [...extensions, ...paymentsExtension(ctx)],
});

/** The pricing extension's params for one version: its price and worst case, and its record (all-time). */
function pricingParams(a: AgentVersion, record: RecordSummary) {
  const p = a.manifest.pricing;
  return {
    pricing_model: p.model,
    price: p.amount !== undefined ? formatAmount(p.amount) : null,
    ...(p.unit ? { unit: p.unit } : {}),
    currency: p.currency,
    worst_case: formatAmount(ownWorstCase(p)),
    success_rate: record.success_rate,
    cost_per_success: record.cost_per_successful_run,
    runs: record.runs,
  };
}

const pricingExtension = (params: Record<string, unknown>) => ({
  uri: PRICING_EXTENSION,
  description: 'What a call costs at most and what successful runs cost so far (docs/a2a.md)',
  required: false,
  params,
});

async function recordsOf(ctx: ServiceContext, versions: readonly AgentVersion[]): Promise<Map<string, RecordSummary>> {
  const loaded = await loadRecordSummaries(
    ctx.db,
    versions.map((v) => ({ id: v.manifest.id, version: v.manifest.version })),
    ctx.settings.payerRule,
  );
  return new Map([...loaded].map(([k, v]) => [k, v.summary]));
}

/** The card of the agent's highest listed version (what a call to `ns/name` resolves to). */
export async function agentCard(ctx: ServiceContext, a: AgentVersion, base: string): Promise<CardJson> {
  const m = a.manifest;
  const record = (await recordsOf(ctx, [a])).get(recordKey(m.id, m.version)) ?? EMPTY_SUMMARY;
  const skills = (m.capabilities.length > 0 ? m.capabilities : [m.id]).map((c) => ({
    id: c,
    name: c,
    description: m.summary,
    tags: [c, m.pricing.model],
    inputModes: ['application/json'],
    outputModes: ['application/json'],
  }));
  return {
    name: m.id,
    description: m.description ?? m.summary,
    supportedInterfaces: interfaces(base, agentA2aPath(m.id)),
    provider: { organization: m.namespace, url: base },
    version: m.version,
    capabilities: capabilities(ctx, [pricingExtension(pricingParams(a, record))]),
    ...security,
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills,
  };
}

/**
 * The gateway's card: one skill per capability some listed agent offers; its pricing extension lists, per
 * capability, the implementers' prices (a call is routed by cost per successful run, as `capability` calls are).
 */
export async function gatewayCard(ctx: ServiceContext, base: string): Promise<CardJson> {
  const latest = new Map<string, AgentVersion>();
  for (const a of ctx.registry.list()) if (!latest.has(a.manifest.id)) latest.set(a.manifest.id, a);
  const versions = [...latest.values()];
  const records = await recordsOf(ctx, versions);
  const byCapability = new Map<string, AgentVersion[]>();
  for (const a of versions) for (const c of a.manifest.capabilities) byCapability.set(c, [...(byCapability.get(c) ?? []), a]);
  const capabilityIds = [...byCapability.keys()].sort();
  const offers = Object.fromEntries(
    capabilityIds.map((c) => [
      c,
      byCapability.get(c)!.map((a) => ({
        agent: a.manifest.id,
        ...pricingParams(a, records.get(recordKey(a.manifest.id, a.manifest.version)) ?? EMPTY_SUMMARY),
      })),
    ]),
  );
  return {
    name: 'Holon',
    description:
      'A gateway through which agents hire agents under a budget: name a capability in the message metadata (`holon/capability`), or call an agent at its own card.',
    supportedInterfaces: interfaces(base, GATEWAY_A2A_PATH),
    provider: { organization: 'Holon', url: base },
    version: PROTOCOL_VERSION,
    capabilities: capabilities(ctx, [pricingExtension({ capabilities: offers })]),
    ...security,
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: capabilityIds.map((c) => ({
      id: c,
      name: c,
      description: `Routed to the listed agent with the lowest cost per successful run (${byCapability.get(c)!.length} offer it)`,
      tags: [c],
      inputModes: ['application/json'],
      outputModes: ['application/json'],
    })),
  };
}

/**
 * The card with its signature: a JWS (EdDSA, the gateway's receipt key) over the SDK's canonical form of the card,
 * `jku` naming the key set — what the SDK's `verifyAgentCardSignature` checks.
 */
export async function signCard(ctx: ServiceContext, card: CardJson, base: string): Promise<CardJson> {
  const { signatures: _, ...unsigned } = card;
  const payload = new TextEncoder().encode(canonicalizeAgentCard(unsigned as never));
  const [protectedHeader, , signature] = (await ctx.signingKey.signDetached(payload, 'JOSE')).split('.');
  return { ...unsigned, signatures: [{ protected: protectedHeader!, signature: signature!, header: { jku: `${base}/.well-known/jwks.json` } }] };
}
