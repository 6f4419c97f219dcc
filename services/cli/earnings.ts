/**
 * `holon earnings [--url URL | HOLON_URL] [--key KEY | HOLON_KEY] [--json]`: the author's published versions and
 * what each earned, from a hosted gateway's `GET /v0/me/agents` (gateway.md §7 "Earnings"; the definition is in
 * shared/catalogue/earnings.ts). `--json` prints the gateway's answer as it is. Exit 0 shown, 1 refused or
 * unreachable, 2 misused.
 */
import { parseArgs } from 'node:util';
import { createHolonClient, HolonApiError } from 'holon/client';

const USAGE = 'usage: holon earnings [--url URL] [--key hlk_h_…] [--json]  (or HOLON_URL, HOLON_KEY)\n';

type PerCurrency = Record<string, string>;

interface VersionLine {
  agent: string;
  version: string;
  listed: boolean;
  credential: { set: boolean } | null;
  earnings: { paid_calls: number; fork_calls: number; share: PerCurrency; royalties: PerCurrency; total: PerCurrency };
}

interface EarningsAnswer {
  account: string;
  versions: VersionLine[];
  totals: { share: PerCurrency; royalties: PerCurrency; unattributed: PerCurrency; total: PerCurrency };
}

const money = (m: PerCurrency): string => {
  const parts = Object.entries(m).map(([c, a]) => `${a} ${c}`);
  return parts.length ? parts.join(' + ') : '0';
};

/** The text form: one line per version, then the totals. */
function formatEarnings(a: EarningsAnswer): string {
  const rows = a.versions.map((v) => {
    const state = v.listed ? 'listed' : 'yanked';
    const credential = v.credential === null ? 'credential ?' : v.credential.set ? 'credential set' : 'no credential';
    const e = v.earnings;
    return `  ${v.agent}@${v.version}  ${state}, ${credential}\n    share ${money(e.share)} (${e.paid_calls} paid calls), royalties ${money(e.royalties)} (${e.fork_calls} fork calls), total ${money(e.total)}\n`;
  });
  const t = a.totals;
  const extra = Object.keys(t.unattributed).length ? `, unattributed ${money(t.unattributed)}` : '';
  const head = a.versions.length ? `${a.account}: ${a.versions.length} published version(s)\n` : `${a.account}: no published versions\n`;
  return `${head}${rows.join('')}total ${money(t.total)} (share ${money(t.share)}, royalties ${money(t.royalties)}${extra})\n`;
}

export async function earningsCommand(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  out: { write(s: string): unknown } = process.stdout,
): Promise<number> {
  const options = { json: { type: 'boolean', default: false }, url: { type: 'string' }, key: { type: 'string' } } as const;
  let values: { json?: boolean; url?: string; key?: string };
  try {
    ({ values } = parseArgs({ args: argv, allowPositionals: false, options }));
  } catch (e) {
    process.stderr.write(`holon earnings: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const url = values.url ?? env.HOLON_URL;
  const key = values.key ?? env.HOLON_KEY;
  if (!url || !URL.canParse(url) || !key) {
    process.stderr.write(`holon earnings: needs the gateway URL (--url or HOLON_URL) and a human key (--key or HOLON_KEY)\n${USAGE}`);
    return 2;
  }
  let body: EarningsAnswer;
  try {
    // The answer's shape is shared/catalogue/earnings.ts's; the document describes only its top level (account, versions, totals).
    body = (await createHolonClient({ baseUrl: new URL(url).origin, key }).earnings()) as EarningsAnswer;
  } catch (e) {
    if (e instanceof HolonApiError) process.stderr.write(`✗ refused, HTTP ${e.status} ${e.error?.code ?? ''}: ${e.error?.message ?? 'no message'}\n`);
    else process.stderr.write(`✗ could not reach ${url}: ${(e as Error).message}\n`);
    return 1;
  }
  out.write(values.json ? `${JSON.stringify(body, null, 2)}\n` : formatEarnings(body));
  return 0;
}
