/**
 * The test stablecoin (contracts/TestUSD.sol: an ERC-20 with 6 decimals and EIP-3009), compiled offline with solc
 * from npm against OpenZeppelin from npm, and deployed by a test on its chain (chain.ts). The compiled artifact is
 * kept in the system's temporary directory under the SHA-256 of the source and the compiler's version, so only the
 * first run compiles (solcjs takes seconds).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { erc20Abi, type Abi, type Hex } from 'viem';
import type { Chain } from './chain.js';

const require = createRequire(import.meta.url);
const SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'contracts', 'TestUSD.sol');

interface Artifact {
  abi: Abi;
  bytecode: Hex;
}

interface Solc {
  version(): string;
  compile(input: string, options: { import(p: string): { contents: string } | { error: string } }): string;
}

/** Compiles TestUSD.sol, or reads what a run with the same source and compiler compiled. Says which. */
function compileTestUsd(): Artifact & { cached: boolean } {
  const solc = require('solc') as Solc;
  const source = readFileSync(SOURCE, 'utf8');
  const key = createHash('sha256').update(solc.version()).update(source).digest('hex').slice(0, 24);
  const dir = path.join(os.tmpdir(), 'holon-solc');
  const file = path.join(dir, `TestUSD-${key}.json`);
  if (existsSync(file)) return { ...(JSON.parse(readFileSync(file, 'utf8')) as Artifact), cached: true };
  const input = {
    language: 'Solidity',
    sources: { 'TestUSD.sol': { content: source } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const out = JSON.parse(
    solc.compile(JSON.stringify(input), {
      import: (p) => {
        try {
          return { contents: readFileSync(require.resolve(p), 'utf8') };
        } catch {
          return { error: `not found: ${p}` };
        }
      },
    }),
  ) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(`TestUSD.sol does not compile:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  const c = out.contracts['TestUSD.sol']!.TestUSD!;
  const artifact: Artifact = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, JSON.stringify(artifact));
  return { ...artifact, cached: false };
}

export interface TestUsd {
  address: Hex;
  name: string;
  version: string;
  decimals: number;
  /** Mints `amount` base units to `to` (the deployer owns the token), mined before it answers. */
  mint(to: Hex, amount: bigint): Promise<void>;
  balanceOf(who: Hex): Promise<bigint>;
}

/** Deploys TestUSD with the chain's first account (its owner). */
export async function deployTestUsd(chain: Chain): Promise<TestUsd> {
  const { abi, bytecode } = compileTestUsd();
  const owner = chain.walletClient(chain.accounts[0]!.privateKey);
  const hash = await owner.deployContract({ abi, bytecode, chain: null } as never);
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  const address = receipt.contractAddress!;
  return {
    address,
    name: 'Test USD',
    version: '2',
    decimals: 6,
    async mint(to, amount) {
      const tx = await owner.writeContract({ address, abi, functionName: 'mint', args: [to, amount], chain: null } as never);
      const mined = await chain.publicClient.waitForTransactionReceipt({ hash: tx });
      if (mined.status !== 'success') throw new Error('mint reverted');
    },
    balanceOf: (who) => chain.publicClient.readContract({ address, abi: erc20Abi, functionName: 'balanceOf', args: [who] }),
  };
}
