#!/usr/bin/env node
// The `holon` command. Sources are TypeScript, loaded through tsx's ESM hooks (no build step).
import { register } from 'tsx/esm/api';

// Who started this process, read before the sources load (seconds): npm's shell may die meanwhile, and the gateway
// must still notice it was left behind (services/cli/parent-watch.ts).
globalThis[Symbol.for('holon.startedUnder')] = process.ppid;

register();
const { main } = await import('../services/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
