// examples/echo-upper: a per_run agent. The input is already validated against interface.input.
export default async function run(input) {
  return { text: input.text.toUpperCase() };
}
