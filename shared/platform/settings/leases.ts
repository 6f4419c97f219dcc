/** Budget leases (docs/ledger.md, "Budget leases"): an API process admits calls from a slice of a mandate it reserved once. */
import { inSection, setting } from './declare.js';

export const LEASES = inSection('gateway', {
  /** shared/ledger/leases/: off (`0`) by default; on an embedded database (PGlite, one connection) always off. */
  budgetLease: setting.amount({
    env: 'HOLON_BUDGET_LEASE',
    default: '0',
    doc: "the slice of a mandate's budget (and of its payer's balance) one API process reserves at once and admits top-level calls from, in the mandate's currency; `0`: off, every call reserves on the mandate's and the balance's rows. A slice is at most an eighth of what is left, so a budget's tail is admitted call by call, and a call short on the per-call path first takes back what any process's lease holds uncarved: leases never refuse a call the budget covers (`docs/ledger.md`, \"Budget leases\"). Off on the embedded database",
    roles: ['api'],
  }),
  budgetLeaseIdleS: setting.int({
    env: 'HOLON_BUDGET_LEASE_IDLE_S',
    default: 30,
    min: 1,
    max: 3600,
    doc: 'a lease no call was admitted from for this long is returned to its mandate, seconds',
    roles: ['api'],
  }),
  budgetLeaseTtlS: setting.int({
    env: 'HOLON_BUDGET_LEASE_TTL_S',
    default: 60,
    min: 5,
    max: 3600,
    doc: "how long a lease lives without its process renewing it (it renews every third of it while it runs), seconds; then the settler's sweeper returns it (its expiry is on its row): what a process that died held comes back within about this time",
    roles: ['api'],
  }),
});
