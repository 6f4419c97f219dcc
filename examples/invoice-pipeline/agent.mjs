// examples/invoice-pipeline: hires text.count and text.translate through ctx.call (capability routing picks
// the cheapest agent per successful run that the caller's mandate allows and that fits each slot).
export default async function run(input, ctx) {
  const counted = await ctx.call({ capability: 'text.count' }, { text: input.text }, { max_cost: '0.05' });
  if (!counted.ok) throw ctx.error('hire_failed', `text.count: ${counted.error.code}`);
  const translated = await ctx.call({ capability: 'text.translate' }, { text: input.text, to: input.to ?? 'fr' }, { max_cost: '0.50' });
  if (!translated.ok) throw ctx.error('hire_failed', `text.translate: ${translated.error.code}`);
  return { words: counted.output.words, translation: translated.output.text };
}
