/**
 * A real EVM chain on loopback for the payment tests: Anvil (its binary ships in the npm package
 * `@foundry-rs/anvil-linux-amd64`, Foundry's own build), chain id 31337, its ten well-known funded accounts, a block
 * mined for every transaction. `stop()` ends the process; a test that starts one stops it in `afterAll`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { createPublicClient, createWalletClient, type Hex, http, publicActions, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const require = createRequire(import.meta.url);

/** Anvil's default accounts: the keys of the mnemonic "test test … junk" (shared/core/dev-keys.ts refuses them in production). */
const KEYS: Hex[] = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
];

const CHAIN_ID = 31337;

export interface Chain {
  rpcUrl: string;
  chainId: number;
  /** CAIP-2: `eip155:31337`. */
  network: string;
  accounts: ReadonlyArray<{ address: Hex; privateKey: Hex }>;
  publicClient: PublicClient;
  walletClient(privateKey: Hex): ReturnType<typeof walletFor>;
  stop(): Promise<void>;
}

const walletFor = (privateKey: Hex, rpcUrl: string) =>
  createWalletClient({ account: privateKeyToAccount(privateKey), transport: http(rpcUrl) }).extend(publicActions);

/** Anvil's binary for this machine: in the platform's own package, `@foundry-rs/anvil-<os>-<arch>`, beside `@foundry-rs/anvil`. */
function anvilBinary(): string {
  const fromAnvil = createRequire(require.resolve('@foundry-rs/anvil/package.json'));
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const platformPackage = ['@foundry-rs/anvil', process.platform, arch].join('-');
  return path.join(path.dirname(fromAnvil.resolve(`${platformPackage}/package.json`)), 'bin', 'anvil');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function ready(client: PublicClient, proc: ChildProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`anvil exited with ${proc.exitCode}`);
    try {
      await client.getChainId();
      return;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`anvil did not answer in 20 s: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

export async function startChain(): Promise<Chain> {
  const port = await freePort();
  const proc = spawn(
    anvilBinary(),
    ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(CHAIN_ID), '--silent', '--accounts', String(KEYS.length)],
    {
      stdio: 'ignore',
    },
  );
  const rpcUrl = `http://127.0.0.1:${port}`;
  const publicClient = createPublicClient({ transport: http(rpcUrl) }) as PublicClient;
  try {
    await ready(publicClient, proc);
  } catch (e) {
    proc.kill('SIGKILL');
    throw e;
  }
  return {
    rpcUrl,
    chainId: CHAIN_ID,
    network: `eip155:${CHAIN_ID}`,
    accounts: KEYS.map((privateKey) => ({ privateKey, address: privateKeyToAccount(privateKey).address })),
    publicClient,
    walletClient: (privateKey) => walletFor(privateKey, rpcUrl),
    stop: async () => {
      if (proc.exitCode !== null) return;
      const gone = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await Promise.race([gone, new Promise((r) => setTimeout(r, 5_000))]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    },
  };
}

/**
 * A gateway's payment settings on this chain (the `config` of startTestGateway): the in-process facilitator on the
 * chain, the treasury and receiving address its first account, `asset` the test token (6 decimals, counted in USD).
 */
export function x402Config(chain: Chain, asset: Hex, options: { keylessPerMin?: number; fx?: string } = {}) {
  return {
    x402: {
      network: chain.network,
      rpcUrl: chain.rpcUrl,
      facilitatorKey: chain.accounts[0]!.privateKey,
      asset,
      assetDecimals: 6,
      assetCurrency: 'USD',
      keylessPerMin: options.keylessPerMin ?? 10_000,
    },
    ...(options.fx ? { fx: options.fx } : {}),
  } as never;
}
