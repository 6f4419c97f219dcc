// examples/word-count: a per_unit agent (0.001 EUR per word, capped at 0.50 by the gateway).
const MICROS_PER_WORD = 1000n; // 0.001 EUR

export default async function run(input, ctx) {
  const text = input.text;
  const words = text.split(/\s+/u).filter((w) => w !== '').length;
  const characters = [...text].length; // code points, not UTF-16 units

  // The caller's cap, in our currency: refuse up front, unbilled, rather than work for less.
  if (ctx.maxCost && BigInt(words) * MICROS_PER_WORD > toMicros(ctx.maxCost.amount)) {
    throw ctx.error('over_budget', `${words} words cost ${formatMicros(BigInt(words) * MICROS_PER_WORD)} EUR, above the max_cost of ${ctx.maxCost.amount}`);
  }

  ctx.units(words);
  return { words, characters };
}

/** "0.05" → 50000n. Amounts are decimal strings with at most 6 decimals; no floating point. */
function toMicros(amount) {
  const [whole, frac = ''] = String(amount).split('.');
  return BigInt(whole || '0') * 1_000_000n + BigInt((frac + '000000').slice(0, 6));
}

function formatMicros(micros) {
  const frac = (micros % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${micros / 1_000_000n}${frac ? `.${frac}` : ''}`;
}
