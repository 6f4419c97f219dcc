#!/usr/bin/env node
// The `holon` command. Sources are TypeScript, loaded through tsx's ESM hooks (no build step).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../services/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
