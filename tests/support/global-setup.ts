// Filled in with the test bed (databases, Redis prefixes).
export default async function setup(): Promise<void> {}
