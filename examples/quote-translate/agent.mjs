// examples/quote-translate: a quote agent. Price = 0.0001 EUR per character, computed in micro-units.
const LANGUAGES = ['fr', 'de', 'es'];
const MICROS_PER_CHARACTER = 100n; // 0.0001 EUR

export default async function run(input, ctx) {
  if (!LANGUAGES.includes(input.to)) throw ctx.error('unsupported_language', `cannot translate into "${input.to}"`);

  const characters = [...input.text]; // code points
  const quote = BigInt(characters.length) * MICROS_PER_CHARACTER;
  if (ctx.maxCost && quote > toMicros(ctx.maxCost.amount)) {
    throw ctx.error('over_budget', `the quote ${formatMicros(quote)} EUR is above the max_cost of ${ctx.maxCost.amount}`);
  }

  ctx.quote(formatMicros(quote));
  return { text: characters.reverse().join(''), to: input.to };
}

/** "0.05" → 50000n. Amounts are decimal strings with at most 6 decimals; no floating point. */
function toMicros(amount) {
  const [whole, frac = ''] = String(amount).split('.');
  return BigInt(whole || '0') * 1_000_000n + BigInt((frac + '000000').slice(0, 6));
}

/** 700n → "0.0007": a decimal string with at most 6 decimals. */
function formatMicros(micros) {
  const frac = (micros % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${micros / 1_000_000n}${frac ? `.${frac}` : ''}`;
}
