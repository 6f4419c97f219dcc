/**
 * A2A agents (docs/a2a-agents.md, the Holon A2A agent profile): `runtime.endpoint` is the agent card's URL,
 * `runtime.skill` the card's skill the version offers. With the SDK's client (@a2a-js/sdk), over the card's JSON-RPC
 * or HTTP+JSON interface (which must be at the endpoint's origin):
 *
 *   card      a published version's card is the one kept when it was published (AgentVersion.a2aCard); an
 *             unpublished agent's is fetched at call time (kept per process for 30 s); a card that cannot be fetched
 *             or used → runtime_unavailable, never billed
 *   request   one role-user message, one data part (the input), metadata holon.call_id, holon.skill,
 *             holon.max_cost {amount, currency} and holon.delegation (each when set); the `headers` option's HTTP
 *             headers (the hosted gateway's Authorization) on every request, the card's included
 *   follow    capabilities.streaming → SendStreamingMessage: artifact updates → the run's chunks when the manifest
 *             declares interface.stream (cumulative `holon/units` in the update's metadata), a working status's text
 *             → progress; otherwise SendMessage returning at once, then GetTask every 100 ms doubling to 2 s;
 *             states → outcomes in states.ts; input-required → the run's question (follow.ts)
 *   stop      the signal fires (hard timeout, cancellation), a chunk is refused, the agent sends something unusable
 *             → CancelTask, best effort; the run ends timeout / cancelled / as the stream says / agent_error
 *   errors    refused / unreachable / the guard's refusal → runtime_unavailable; an answer that is not A2A (HTML,
 *             an HTTP error, bad JSON-RPC), larger than the limit, a connection dropped mid-answer → agent_error.
 * Published agents (any origin but `shipped`) go through the `published` option's fetch (the guarded client,
 * ../published.ts): an http:// endpoint without allowPrivateEndpoints, a refused address, a redirect are then
 * runtime_unavailable. `run` never throws.
 */
import type { AgentCard } from '@a2a-js/sdk';
import { type Client, ClientFactory, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { guardRefusal, type FetchFunction } from '../../platform/guarded-net.js';
import { abortedResult, raceSignal } from '../abort.js';
import { agentError, failure, truncate } from '../messages.js';
import { routeOf } from '../published.js';
import { errorCodes, extraHeaders, maxResponseBytesOf, networkFailure, type HeadersOption } from '../remote.js';
import type { AgentVersion, RunContext, RunResult, Runtime } from '../types.js';
import { CardCache } from './card-cache.js';
import { CardError, fetchCardJson, readCard } from './card.js';
import { Conversation, poll, sdkMessage, stream } from './follow.js';
import { limitedFetch, tooLarge } from './limited-fetch.js';
import { sendRequest, userMessage } from './parts.js';

export interface A2aRuntimeOptions {
  /** The largest HTTP answer read, in bytes. Default 10 MB. */
  maxResponseBytes?: number;
  /** Extra request headers for an agent, e.g. `{ authorization: 'Bearer …' }`. They never replace the protocol's own. */
  headers?: HeadersOption;
  /** The fetch for shipped agents (and every agent without `published`). Default: the global fetch. */
  fetch?: FetchFunction;
  /** The guarded client for published agents (../published.ts); without it they use `fetch` like shipped ones. */
  published?: { fetch: FetchFunction; allowHttp: boolean };
  /** How long an unpublished agent's card is kept. Default 30 s. */
  cardTtlMs?: number;
}

/** Headers the SDK's transports own: the `headers` option cannot replace them. */
const PROTOCOL_HEADERS: ReadonlySet<string> = new Set(['accept', 'content-type', 'a2a-version', 'a2a-extensions', 'x-a2a-extensions']);

interface Deps {
  options: A2aRuntimeOptions;
  cards: CardCache;
  maxResponseBytes: number;
  baseFetch: FetchFunction;
}

/** One run: what it calls, and its conversation once it has one (to cancel the task when the signal fires). */
interface Job {
  agent: AgentVersion;
  input: unknown;
  run: RunContext;
  conv?: Conversation;
}

/** Where a run's requests go, and how. */
interface Route {
  url: URL;
  guarded: boolean;
  fetch: FetchFunction;
  headers: Record<string, string>;
}

export function createA2aRuntime(options: A2aRuntimeOptions = {}): Runtime {
  const deps: Deps = {
    options,
    cards: new CardCache(options.cardTtlMs),
    maxResponseBytes: maxResponseBytesOf(options.maxResponseBytes),
    baseFetch: options.fetch ?? ((url, init) => fetch(url, init)),
  };
  return {
    run(agent: AgentVersion, input: unknown, run: RunContext): Promise<RunResult> {
      if (run.signal.aborted) return Promise.resolve(abortedResult(run.signal.reason, run.timeoutMs));
      const job: Job = { agent, input, run };
      return raceSignal(
        run.signal,
        () => call(deps, job),
        () => {
          job.conv?.cancel();
          return abortedResult(run.signal.reason, run.timeoutMs);
        },
      );
    },
  };
}

async function routeFor(deps: Deps, job: Job): Promise<Route | { failure: RunResult }> {
  const route = routeOf(job.agent, deps.options.published);
  if ('failure' in route) return route;
  const prepared = await extraHeaders(deps.options.headers, job.agent, PROTOCOL_HEADERS);
  if ('failure' in prepared) return prepared;
  const fetch = limitedFetch(route.guarded ? route.guarded.fetch : deps.baseFetch, deps.maxResponseBytes);
  return { url: route.url, guarded: route.guarded !== undefined, fetch, headers: prepared.headers };
}

/** The card the run uses: the one kept at publish, else fetched now (or recently); runtime_unavailable when unusable. */
async function cardFor(deps: Deps, job: Job, route: Route): Promise<AgentCard | { failure: RunResult }> {
  const { agent, run } = job;
  const kept = agent.origin === 'published' ? agent.a2aCard : undefined;
  const key = `${route.guarded ? 'guarded' : 'direct'}\n${route.url.href}`;
  let json = kept ?? deps.cards.get(key);
  const fetched = json === undefined;
  try {
    if (fetched) json = await fetchCardJson(route.url, route.fetch, route.headers, run.signal);
    const card = readCard(json, route.url, agent.manifest.runtime.skill);
    if (fetched) deps.cards.set(key, json);
    return card;
  } catch (err) {
    if (run.signal.aborted) return { failure: abortedResult(run.signal.reason, run.timeoutMs) };
    if (err instanceof CardError) return { failure: failure('runtime_unavailable', truncate(`the agent card cannot be used: ${err.message}`, 200)) };
    const network = networkFailure(err, run.timeoutMs, route.url);
    const why = network.kind === 'failure' ? network.message : sdkMessage(err);
    return { failure: failure('runtime_unavailable', truncate(`the agent card could not be fetched: ${why}`, 200)) };
  }
}

async function call(deps: Deps, job: Job): Promise<RunResult> {
  const { agent, input, run } = job;
  const route = await routeFor(deps, job);
  if ('failure' in route) return route.failure;
  const card = await cardFor(deps, job, route);
  if ('failure' in card) return card.failure;
  const fetchImpl = route.fetch as typeof fetch;
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    clientConfig: { polling: true },
  });
  let client: Client;
  try {
    client = await factory.createFromAgentCard(card);
  } catch (err) {
    return failure('runtime_unavailable', truncate(`no client for the agent card: ${sdkMessage(err)}`, 200));
  }
  const skill = agent.manifest.runtime.skill;
  // Artifact updates are the call's chunks only for an agent that declares a streamed output (interface.stream).
  const chunks = agent.manifest.interface.stream !== undefined;
  const conv = new Conversation(client, { signal: run.signal, serviceParameters: route.headers }, run, { skill, chunks });
  job.conv = conv;
  const message = userMessage(input, run, skill);
  try {
    const result = card.capabilities?.streaming ? await stream(conv, message) : await poll(conv, await client.sendMessage(sendRequest(message), conv.options));
    // The run stops following a task that has not ended (refused chunk, unusable answer, unanswered question).
    conv.cancel();
    return result;
  } catch (err) {
    conv.cancel();
    return callFailure(err, run, route.url);
  }
}

/** A request of the conversation failed. */
function callFailure(err: unknown, run: RunContext, url: URL): RunResult {
  if (run.signal.aborted) return abortedResult(run.signal.reason, run.timeoutMs);
  const large = tooLarge(err);
  if (large) return agentError(large.message);
  if (guardRefusal(err) || errorCodes(err).length > 0) return networkFailure(err, run.timeoutMs, url);
  return agentError(`the agent's answer is not a usable A2A answer: ${sdkMessage(err)}`);
}
