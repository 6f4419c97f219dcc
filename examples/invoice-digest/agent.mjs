// examples/invoice-digest: an included orchestrator; the author pays echo-upper out of its own account.
export default async function run(input, ctx) {
  const r = await ctx.call('examples/echo-upper', { text: input.text });
  if (!r.ok) throw ctx.error('hire_failed', r.error.code);
  return { digest: r.output.text };
}
