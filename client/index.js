// @ts-check
/**
 * The typed Holon client (docs/client.md): a plain ES module, no build step, so Node imports it as it is; its types
 * are ./index.d.ts, on the generated ./openapi.d.ts. `createHolonClient({baseUrl, key})` gives the openapi-fetch
 * client of the whole API (`raw`) and helpers that answer with the API's objects or throw a HolonApiError.
 * tests/unit/client-types.test.ts type-checks this file against ./index.d.ts (`@type` below).
 */
import createClient from 'openapi-fetch';
import { readCallEvents } from './events.js';

/** @typedef {import('./index.js').CallState} CallState */
/** @typedef {import('./index.js').CallSucceeded} CallSucceeded */
/** @typedef {import('./index.js').Problem} Problem */
/** @typedef {import('./index.js').Receipt} Receipt */
/** @typedef {import('./index.js').ReceiptQuery} ReceiptQuery */
/** @typedef {import('./index.js').RequestOptions} RequestOptions */

/** @param {unknown} v @returns {v is Record<string, unknown>} */
const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The `{code, message, problems?}` of an answer, when it has one (a proxy's page or an empty body has none).
 * @param {unknown} body
 * @returns {import('./index.js').ErrorAnswer['error'] | undefined}
 */
function errorOf(body) {
  const error = isObject(body) ? body.error : undefined;
  if (!isObject(error) || typeof error.code !== 'string' || typeof error.message !== 'string') return undefined;
  return {
    code: error.code,
    message: error.message,
    ...(Array.isArray(error.problems) ? { problems: /** @type {Problem[]} */ (error.problems) } : {}),
  };
}

/** @type {typeof import('./index.js').HolonApiError} */
export const HolonApiError = class HolonApiError extends Error {
  /** @override @type {'HolonApiError'} */
  name = 'HolonApiError';

  /**
   * @param {Response} response
   * @param {unknown} body
   * @param {number} [status]
   */
  constructor(response, body, status = response.status) {
    const error = errorOf(body);
    super(error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.error = error;
    this.code = error?.code ?? `http_${status}`;
    this.problems = error?.problems ?? [];
    /** @type {Receipt | undefined} */
    this.receipt = isObject(body) && isObject(body.receipt) ? /** @type {Receipt} */ (body.receipt) : undefined;
    this.body = body;
    this.response = response;
  }
};

/**
 * The data of a 2xx answer; any other answer throws a HolonApiError with its body.
 * @template T
 * @param {{data?: T, error?: unknown, response: Response}} result
 * @returns {T}
 */
function unwrap(result) {
  if (!result.response.ok || result.error !== undefined) throw new HolonApiError(result.response, result.error);
  return /** @type {T} */ (result.data);
}

/** What the gateway says of a failed run (shared/receipts/store.ts describeFailure). @param {Receipt} receipt */
function failureOf(receipt) {
  const code = receipt.error ?? 'agent_error';
  return { code, message: `the agent failed: ${code}; ${receipt.billed ? 'billed, as its manifest declares for this error' : 'nothing was charged'}` };
}

/**
 * A followed call's state, once final, as POST /v0/calls answers it: a success (its output), or the 502 error of a
 * failed run. A followed call is never held: a call needing approval is answered so at once.
 * @param {CallState & {receipt: Receipt}} state @param {Response} response
 * @returns {CallSucceeded}
 */
function finished({ receipt, output, output_gone }, response) {
  if (receipt.status !== 'succeeded') throw new HolonApiError(response, { error: failureOf(receipt), receipt }, 502);
  return { status: 'succeeded', output: output ?? null, ...(output_gone === undefined ? {} : { output_gone }), receipt };
}

/**
 * `ns/name` (an agent, or a mandate: `alice/sandbox`, a sub-mandate `alice/sandbox.r_…`) → its two path parameters.
 * @param {string} id
 * @param {string} what
 */
function nsName(id, what) {
  const at = id.indexOf('/');
  if (at <= 0 || at === id.length - 1) throw new TypeError(`name the ${what} as ns/name, not ${JSON.stringify(id)}`);
  return { ns: id.slice(0, at), name: id.slice(at + 1) };
}

/** @param {string} agent */
const agentPath = (agent) => nsName(agent, 'agent');

/** @param {ReceiptQuery} query */
const receiptFilters = ({ limit, ...rest }) => ({ ...rest, ...(limit === undefined ? {} : { limit: Number(limit) }) });

/** @type {typeof import('./index.js').createHolonClient} */
export function createHolonClient({ baseUrl, key, fetch, headers }) {
  /** @type {import('openapi-fetch').Client<import('./openapi.js').paths>} */
  const raw = createClient({
    baseUrl,
    ...(fetch ? { fetch } : {}),
    headers: { ...headers, ...(key ? { authorization: `Bearer ${key}` } : {}) },
  });

  /** @param {string} id @param {{seconds?: number} & RequestOptions} [options] */
  const wait = async (id, { seconds = 30, signal } = {}) =>
    unwrap(await raw.GET('/v0/calls/{id}', { params: { path: { id }, query: { wait: seconds } }, signal }));

  /** @param {ReceiptQuery} query @param {RequestOptions} options */
  const listReceipts = async (query, { signal } = {}) => unwrap(await raw.GET('/v0/receipts', { params: { query: receiptFilters(query) }, signal }));

  /** @param {ReceiptQuery} query @param {RequestOptions} options */
  async function* pages(query, options) {
    let before = query.before;
    for (;;) {
      const page = await listReceipts({ ...query, ...(before === undefined ? {} : { before }) }, options);
      yield page;
      if (page.next === undefined) return;
      before = page.next;
    }
  }

  return {
    raw,

    async call(request, { idempotencyKey, signal } = {}) {
      const header = idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey };
      const answer = unwrap(await raw.POST('/v0/calls', { body: request, params: { header }, signal }));
      if (answer.status === 'succeeded' || answer.status === 'pending_approval') return answer;
      // Past the gateway's synchronous wait (202, no receipt yet): follow the call until it ends.
      const { id } = answer.call;
      for (;;) {
        const followed = await raw.GET('/v0/calls/{id}', { params: { path: { id }, query: { wait: 60 } }, signal });
        const state = unwrap(followed);
        // A run that failed, learnt by following it (GET answers 200 with its receipt): the error POST answers with (502).
        if (state.receipt) return finished({ ...state, receipt: state.receipt }, followed.response);
      }
    },

    async callAsync(request, { idempotencyKey, signal } = {}) {
      const header = { Prefer: 'respond-async', ...(idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey }) };
      return unwrap(await raw.POST('/v0/calls', { body: request, params: { header }, signal }));
    },

    wait,

    async cancel(id, { signal } = {}) {
      return unwrap(await raw.POST('/v0/calls/{id}/cancel', { params: { path: { id } }, signal }));
    },

    events(id, { lastEventId, signal } = {}) {
      return readCallEvents({
        url: `${baseUrl.replace(/\/+$/, '')}/v0/calls/${encodeURIComponent(id)}/events`,
        headers: { ...headers, ...(key ? { authorization: `Bearer ${key}` } : {}) },
        fetch: fetch ?? ((r) => globalThis.fetch(r)),
        ...(lastEventId === undefined ? {} : { lastEventId }),
        ...(signal ? { signal } : {}),
        onError: async (response) => {
          const text = await response.text();
          let body = text;
          try {
            body = JSON.parse(text);
          } catch {}
          throw new HolonApiError(response, body);
        },
      });
    },

    async answer(id, input, { question, signal } = {}) {
      const body = { input, ...(question === undefined ? {} : { question }) };
      return unwrap(await raw.POST('/v0/calls/{id}/input', { params: { path: { id } }, body, signal }));
    },

    receipts: {
      list: (query = {}, options = {}) => listReceipts(query, options),
      async get(id, { signal } = {}) {
        return unwrap(await raw.GET('/v0/receipts/{id}', { params: { path: { id } }, signal }));
      },
      pages: (query = {}, options = {}) => pages(query, options),
      async *all(query = {}, options = {}) {
        for await (const page of pages(query, options)) yield* page.receipts;
      },
    },

    mandates: {
      async list({ signal } = {}) {
        return unwrap(await raw.GET('/v0/mandates', { signal })).mandates;
      },
      async create(mandate, { signal } = {}) {
        return unwrap(await raw.POST('/v0/mandates', { body: mandate, signal }));
      },
      async get(id, { signal } = {}) {
        return unwrap(await raw.GET('/v0/mandates/{ns}/{name}', { params: { path: nsName(id, 'mandate') }, signal }));
      },
    },

    approvals: {
      async list(query = {}, { signal } = {}) {
        return unwrap(await raw.GET('/v0/approvals', { params: { query }, signal })).approvals;
      },
      async decide(id, decision = {}, { async = false, signal } = {}) {
        const header = async ? { Prefer: 'respond-async' } : {};
        return unwrap(await raw.POST('/v0/approvals/{id}', { params: { path: { id }, header }, body: decision, signal }));
      },
    },

    files: {
      async upload(data, { contentType = 'application/octet-stream', signal } = {}) {
        // The bytes as they are (not JSON), with their own content type.
        return unwrap(await raw.POST('/v0/files', { body: data, bodySerializer: (b) => b, headers: { 'content-type': contentType }, signal }));
      },
    },

    async publish(manifest, { signal } = {}) {
      return unwrap(await raw.POST('/v0/agents', { body: manifest, signal }));
    },

    async earnings({ signal } = {}) {
      return unwrap(await raw.GET('/v0/me/agents', { signal }));
    },

    payouts: {
      async setAddress(address, { signal } = {}) {
        return unwrap(await raw.PUT('/v0/me/payout-address', { body: { address }, signal }));
      },
      async create(amount, { signal } = {}) {
        return unwrap(await raw.POST('/v0/me/payouts', { body: { amount }, signal }));
      },
      async list({ signal } = {}) {
        return unwrap(await raw.GET('/v0/me/payouts', { signal }));
      },
    },

    credential: {
      async set(agent, token, { signal } = {}) {
        return unwrap(await raw.PUT('/v0/agents/{ns}/{name}/credential', { params: { path: agentPath(agent) }, body: { token }, signal }));
      },
      async delete(agent, { signal } = {}) {
        return unwrap(await raw.DELETE('/v0/agents/{ns}/{name}/credential', { params: { path: agentPath(agent) }, signal }));
      },
    },
  };
}
