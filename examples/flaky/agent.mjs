// examples/flaky: produces the outcome named by input.mode (see holon.yaml for the billing of each).
export default async function run(input, ctx) {
  switch (input.mode) {
    case 'ok':
      return { result: 'ok' };
    case 'declared_billed':
      throw ctx.error('partial', 'half of the work was done');
    case 'declared_unbilled':
      throw ctx.error('not_found', 'there was nothing to work on');
    case 'undeclared':
      throw ctx.error('mystery', 'an error code the manifest does not declare');
    case 'crash':
      throw new Error('flaky crashed on purpose');
    case 'invalid_output':
      return { result: 42, surprise: true }; // breaks interface.output: result must be "ok", no extra fields
    default:
      throw new Error(`unknown mode ${JSON.stringify(input.mode)}`);
  }
}
