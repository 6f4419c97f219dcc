/**
 * Who pays a call in the ledger. A mandate's issuer pays, except a payment's mandate (issued by the paying wallet,
 * `x402:<address>`): its calls are paid from the chain's account, `external:x402:<network>`, which money from outside
 * comes in through — its hold is a reservation of what the payer authorized, and its journal entry is written only
 * once the payment is collected (collect.ts).
 */
import type { ServiceContext } from '../context.js';
import { HolonError } from '../core/errors.js';
import { isPayerWallet } from '../core/identifiers.js';

export function payingAccount(ctx: Pick<ServiceContext, 'payments'>, issuer: string): string {
  if (!isPayerWallet(issuer)) return issuer;
  if (!ctx.payments) throw new HolonError('gateway_error', 'a payment’s mandate is used while payments from outside are off');
  return ctx.payments.externalAccount;
}
