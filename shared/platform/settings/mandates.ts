/** The mandates a gateway starts with, and the demo credit of a new account. */
import { inSection, ROLES, setting } from './declare.js';

export const MANDATES = inSection('gateway', {
  /** `holon serve` on a dev gateway defaults it to examples/mandates (dev-mandates.ts); every other role and hosted mode load none unless named. */
  mandatesDir: setting.string({
    env: 'HOLON_MANDATES',
    shown: '`holon serve` in dev: `examples/mandates`; otherwise none',
    doc: 'a directory of mandate files loaded at start (`--mandates`), each issuer credited `HOLON_SIGNUP_CREDIT` once; empty loads none. Hosted mode and production load none unless it is set',
    roles: ROLES,
  }),
  signupCredit: setting.amount({
    env: 'HOLON_SIGNUP_CREDIT',
    default: '5.00',
    doc: 'demo credit (EUR) of a new account, and of each issuer of `HOLON_MANDATES`',
    roles: ROLES,
  }),
});
