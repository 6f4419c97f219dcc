/**
 * Split of one charged amount between the platform and a lineage chain (manifest.md §8, gateway.md §2).
 * Pure, bigint only; every micro-unit lands in exactly one account.
 *
 * - fee = floor(amount × feeRate) to the platform; revenue_0 = amount − fee.
 * - chain[0] is the author account of the agent called; chain[i].royalty is the share of revenue_i that
 *   level i pays its upstream chain[i+1]: revenue_{i+1} = floor(revenue_i × royalty_i). Level i keeps
 *   revenue_i − revenue_{i+1}; the last level keeps all (its royalty, if any, is ignored).
 * - Lines are summed per account, zero lines are omitted, order is stable: platform first, then chain
 *   order (an account appearing twice sits where it first appears).
 * - Refused with a RangeError: negative amounts, an empty chain, more than 9 accounts (8 levels),
 *   a royalty outside [0, 1), a fee rate outside [0, 1].
 */
import { mulRate, type Micros, type Rate } from './money.js';

export interface ChainLink {
  account: string;
  /** What this level pays its upstream (the next link). */
  royalty?: Rate;
}

export interface Line {
  account: string;
  amount: Micros;
}

export const PLATFORM_ACCOUNT = 'holon';
const PLATFORM_FEE: Rate = { num: 10n, den: 100n };
/** 8 levels of lineage: the agent called and at most 8 upstreams. */
const MAX_CHAIN_ACCOUNTS = 9;

function checkRate(r: Rate, what: string, allowOne: boolean): void {
  const tooHigh = allowOne ? r.num > r.den : r.num >= r.den;
  if (r.den <= 0n || r.num < 0n || tooHigh) {
    throw new RangeError(`${what} must be in [0, 1${allowOne ? ']' : ')'}, got ${r.num}/${r.den}`);
  }
}

export function split(amount: Micros, chain: readonly ChainLink[], platformAccount: string = PLATFORM_ACCOUNT, feeRate: Rate = PLATFORM_FEE): Line[] {
  if (amount < 0n) throw new RangeError('a split amount must not be negative');
  if (chain.length === 0) throw new RangeError('a split needs at least the author of the agent called');
  if (chain.length > MAX_CHAIN_ACCOUNTS) {
    throw new RangeError(`a lineage chain has at most ${MAX_CHAIN_ACCOUNTS} accounts, got ${chain.length}`);
  }
  checkRate(feeRate, 'the platform fee rate', true);

  const totals = new Map<string, Micros>();
  const add = (account: string, value: Micros): void => {
    totals.set(account, (totals.get(account) ?? 0n) + value);
  };
  const fee = mulRate(amount, feeRate, 'down');
  add(platformAccount, fee);
  let revenue = amount - fee;
  chain.forEach((link, i) => {
    const last = i === chain.length - 1;
    if (link.royalty && !last) checkRate(link.royalty, `the royalty of level ${i} (${link.account})`, false);
    const upstream = last || !link.royalty ? 0n : mulRate(revenue, link.royalty, 'down');
    add(link.account, revenue - upstream);
    revenue = upstream;
  });
  return [...totals].filter(([, v]) => v !== 0n).map(([account, value]) => ({ account, amount: value }));
}

/** The platform's account and fee rate, when not the defaults (PLATFORM_ACCOUNT, PLATFORM_FEE). */
interface PlatformCut {
  platformAccount?: string;
  feeRate?: Rate;
}

/**
 * The journal lines of one settlement: the payer's debit (−amount) first, then the split credits.
 * The journal entry merges lines per (account, currency) (docs/ledger.md, "Posting an entry"): a payer who also
 * earns from the same call (as author or upstream) has one netted line there; the receipt's splits show both legs.
 * Lines sum to exactly zero; a zero amount gives no lines.
 */
export function journalLinesForSettlement(payer: string, amount: Micros, chain: readonly ChainLink[], platform: PlatformCut = {}): Line[] {
  const { platformAccount = PLATFORM_ACCOUNT, feeRate = PLATFORM_FEE } = platform;
  const credits = split(amount, chain, platformAccount, feeRate);
  return amount === 0n ? [] : [{ account: payer, amount: -amount }, ...credits];
}
