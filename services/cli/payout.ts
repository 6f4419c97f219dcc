/**
 * `holon payout <amount> | --list | --address 0x… [--url URL | HOLON_URL] [--key KEY | HOLON_KEY] [--json]`: withdraw
 * earnings in the asset's currency to the payout address, list payouts, or set the address (a hosted gateway with
 * payments from outside; docs/payments.md). Exit 0 done, 1 refused or unreachable, 2 misused.
 */
import { parseArgs } from 'node:util';
import { createHolonClient, HolonApiError } from 'holon/client';

const USAGE = 'usage: holon payout <amount> | --list | --address 0x… [--url URL] [--key hlk_h_…] [--json]  (or HOLON_URL, HOLON_KEY)\n';

interface PayoutLine {
  id: string;
  amount: string;
  currency: string;
  address: string;
  state: string;
  transaction: string | null;
  error: string | null;
}

const line = (p: PayoutLine) =>
  `  ${p.id}  ${p.amount} ${p.currency} → ${p.address}  ${p.state}${p.transaction ? `  ${p.transaction}` : ''}${p.error ? `  (${p.error})` : ''}\n`;

export async function payoutCommand(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  out: { write(s: string): unknown } = process.stdout,
): Promise<number> {
  const options = {
    json: { type: 'boolean', default: false },
    list: { type: 'boolean', default: false },
    address: { type: 'string' },
    url: { type: 'string' },
    key: { type: 'string' },
  } as const;
  let values: { json?: boolean; list?: boolean; address?: string; url?: string; key?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: argv, allowPositionals: true, options }));
  } catch (e) {
    process.stderr.write(`holon payout: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const url = values.url ?? env.HOLON_URL;
  const key = values.key ?? env.HOLON_KEY;
  const asks = [values.list, values.address !== undefined, positionals.length > 0].filter(Boolean).length;
  if (!url || !URL.canParse(url) || !key || asks !== 1 || positionals.length > 1) {
    process.stderr.write(`holon payout: needs the gateway URL, a human key, and one of <amount>, --list or --address\n${USAGE}`);
    return 2;
  }
  const holon = createHolonClient({ baseUrl: new URL(url).origin, key });
  try {
    if (values.list) {
      const { payouts } = (await holon.payouts.list()) as { payouts: PayoutLine[] };
      out.write(values.json ? `${JSON.stringify(payouts, null, 2)}\n` : payouts.length ? payouts.map(line).join('') : 'no payouts yet\n');
    } else if (values.address !== undefined) {
      const set = await holon.payouts.setAddress(values.address);
      out.write(values.json ? `${JSON.stringify(set, null, 2)}\n` : `payouts go to ${set.payout_address}\n`);
    } else {
      const p = (await holon.payouts.create(positionals[0]!)) as PayoutLine;
      out.write(values.json ? `${JSON.stringify(p, null, 2)}\n` : line(p));
    }
  } catch (e) {
    if (e instanceof HolonApiError) process.stderr.write(`✗ refused, HTTP ${e.status} ${e.error?.code ?? ''}: ${e.error?.message ?? 'no message'}\n`);
    else process.stderr.write(`✗ could not reach ${url}: ${(e as Error).message}\n`);
    return 1;
  }
  return 0;
}
