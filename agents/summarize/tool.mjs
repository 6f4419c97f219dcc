// holon-labs/summarize: summarizes a text with Claude (Anthropic Messages API), billed per 1k tokens.
import { fetchText, formatMicros, parseJson, toMicros, toolError } from '../tool-kit.mjs';

export const DEFAULT_MODEL = 'claude-haiku-4-5';
export const DEFAULT_MAX_WORDS = 100;
/** Price per unit (1k tokens) and the most one run can cost: keep in step with holon.yaml's pricing. */
export const PRICE_PER_UNIT = '0.004';
export const MAX_PRICE = '0.50';
export const CURRENCY = 'EUR';
const MAX_RESPONSE_BYTES = 1024 * 1024;

/** The output budget for a summary of at most `maxWords` words (a word is rarely more than 3 tokens). */
export function maxTokensFor(maxWords) {
  return maxWords * 3 + 100;
}

export function instructionFor(maxWords) {
  return (
    `Summarize the text between the <text> tags in at most ${maxWords} words, in the language of the text. ` +
    'Answer with the summary only: no preamble, no title, no notes.'
  );
}

/** Units (1k tokens) for a number of tokens: started thousands count. */
export function unitsFor(tokens) {
  return Math.ceil(tokens / 1000);
}

/** The worst-case price of summarizing `text`, in micro-units: (chars/4 + prompt + max_tokens) tokens, capped at MAX_PRICE. */
export function estimateMicros(text, maxWords) {
  const prompt = instructionFor(maxWords).length + 32;
  const tokens = Math.ceil((text.length + prompt) / 4) + maxTokensFor(maxWords);
  const micros = BigInt(unitsFor(tokens)) * toMicros(PRICE_PER_UNIT);
  const cap = toMicros(MAX_PRICE);
  return micros < cap ? micros : cap;
}

export default async function run(input, { signal, maxCost, env = process.env } = {}) {
  if (typeof input?.text !== 'string') throw new TypeError('input.text must be a string');
  const maxWords = input.max_words ?? DEFAULT_MAX_WORDS;
  const apiKey = env.ANTHROPIC_API_KEY;
  if (!apiKey) throw toolError('not_configured', 'this agent has no Anthropic API key (ANTHROPIC_API_KEY)');

  // Refuse up front, unbilled, when the worst case is above the caller's cap (in our currency).
  const cap = maxCost?.currency === CURRENCY ? toMicros(maxCost.amount) : null;
  if (cap !== null) {
    const estimate = estimateMicros(input.text, maxWords);
    if (estimate > cap) {
      throw toolError(
        'over_budget',
        `summarizing this text may cost up to ${formatMicros(estimate)} ${CURRENCY}, above the max_cost of ${maxCost.amount} ${CURRENCY}`,
      );
    }
  }

  const base = (env.ANTHROPIC_BASE_URL || 'https://api.anthropic.com').replace(/\/+$/, '');
  const request = {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: env.HOLON_SUMMARIZE_MODEL || DEFAULT_MODEL,
      max_tokens: maxTokensFor(maxWords),
      messages: [{ role: 'user', content: `${instructionFor(maxWords)}\n\n<text>\n${input.text}\n</text>` }],
    }),
  };
  const fail = (why) => toolError('upstream_error', `the Anthropic API ${why}`);
  const { status, ok, text: body } = await fetchText(`${base}/v1/messages`, request, { signal, maxBytes: MAX_RESPONSE_BYTES, fail });
  if (!ok) {
    const detail = apiErrorMessage(body);
    throw toolError('upstream_error', `the Anthropic API answered ${status}${detail ? `: ${detail}` : ''}`);
  }
  const message = parseJson(body);
  const text = Array.isArray(message?.content)
    ? message.content
        .filter((b) => b?.type === 'text' && typeof b.text === 'string')
        .map((b) => b.text)
        .join('')
    : undefined;
  const inputTokens = message?.usage?.input_tokens;
  const outputTokens = message?.usage?.output_tokens;
  if (text === undefined || !isCount(inputTokens) || !isCount(outputTokens)) {
    throw toolError('upstream_error', 'the Anthropic API answered with something that is not a message');
  }
  return {
    output: { summary: text.trim(), input_tokens: inputTokens, output_tokens: outputTokens },
    units: unitsFor(inputTokens + outputTokens),
  };
}

/** `error.type: error.message` of an Anthropic error body, shortened; never the request. */
function apiErrorMessage(body) {
  const error = parseJson(body)?.error;
  if (typeof error !== 'object' || error === null) return '';
  const parts = [error.type, error.message].filter((p) => typeof p === 'string' && p !== '');
  return parts.join(': ').slice(0, 200);
}

function isCount(value) {
  return Number.isSafeInteger(value) && value >= 0;
}
