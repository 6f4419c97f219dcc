/**
 * The budget leases of one API process (docs/ledger.md, "Budget leases"). Per (mandate, payer, currency) it holds at
 * most one lease: a slice of the mandate's remaining budget and of the payer's available balance, reserved once
 * (`holon_lease_take`). A top-level call is admitted by carving its worst case out of it (`holon_admit_leased`, group
 * commit: calls that arrive together go in one statement), which writes the call's row and its hold and changes only
 * the lease's row. The in-memory view of each lease (amount, carved) only decides quickly whether to try it: Postgres
 * decides (a conditional UPDATE and the CHECK `carved <= amount`); settlements elsewhere only ever free more of a
 * lease than this view knows, so it errs on the side of not trying.
 *
 * A call the lease cannot carve (too big for a slice, no lease yet, what is left below its worst case, the lease
 * closed by another process or the sweeper) goes the per-call path as without leases (`admitCall`), and only when
 * that is short, through `holon_admit_tail`, which first takes back what any open lease holds uncarved: a call is
 * never refused while a lease holds the money it needs. Leases are topped up in the background when what is left in
 * them falls below a quarter of a slice, renewed (expiry) every third of their lifetime, returned when no call used
 * them for the idle time, and all returned by `close` (the process stops).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../../db/connect.js';
import { groupCommit } from '../../db/group-commit.js';
import { type AdmittedCall, admitCall, type Reservation } from '../money-functions.js';
import { admitLeased, admitTail, type Carve, type LeasedCall, type LeaseFigures, readOpenLease, renewLeases, returnLeases, takeLease } from './sql.js';

export interface LeasePolicy {
  /** The uncarved part a lease is brought up to (HOLON_BUDGET_LEASE), micro-units. */
  slice: bigint;
  /** A lease unused this long is returned (HOLON_BUDGET_LEASE_IDLE_S). */
  idleMs: number;
  /** A lease's lifetime without renewal (HOLON_BUDGET_LEASE_TTL_S). */
  ttlMs: number;
}

/** A lease takes at most this fraction (1/n) of what the mandate and the balance have left. */
const DIVISOR = 8;
/** How many times a short call is tried again when a lease was taken while it was being decided. */
const TAIL_TRIES = 5;
const CARVE_BATCH_MAX = 64;

interface Lease extends LeaseFigures {
  id: string;
  mandateId: string;
  account: string;
  currency: string;
  lastUsed: number;
  topping: boolean;
}

export interface LeaseManager {
  /** This process's id on its lease rows. */
  readonly owner: string;
  /** Admit a top-level call: carved from a lease when one can take it, else on the per-call path. */
  admit(call: AdmittedCall): Promise<Reservation>;
  /** The open leases this process holds, as it sees them. */
  held(): ReadonlyArray<Readonly<Lease>>;
  /** Wait for the background work started so far (takes, top-ups, refreshes). */
  settled(): Promise<void>;
  /** Renew the expiry of every lease held and return those idle for the idle time (the periodic tick). */
  tick(): Promise<void>;
  /** Stop: every lease returned. */
  close(): Promise<void>;
}

const keyOf = (c: { mandate_id: string; payer: string; currency: string }) => `${c.mandate_id}\u0000${c.payer}\u0000${c.currency}`;

export function createLeaseManager(db: Db, policy: LeasePolicy, options: { owner?: string; now?: () => number; timer?: boolean } = {}): LeaseManager {
  return new Manager(db, policy, options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`, options);
}

class Manager implements LeaseManager {
  private readonly leases = new Map<string, Lease>();
  private readonly taking = new Set<string>();
  private readonly background = new Set<Promise<unknown>>();
  private readonly carve: (call: LeasedCall) => Promise<Carve>;
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly policy: LeasePolicy,
    readonly owner: string,
    options: { now?: () => number; timer?: boolean },
  ) {
    this.now = options.now ?? Date.now;
    this.carve = groupCommit<LeasedCall, Carve>({
      maxBatch: CARVE_BATCH_MAX,
      batch: (calls) => admitLeased(db, calls),
      // A batch that failed as a whole is carved call by call (idempotent by call id).
      one: async (c) => (await admitLeased(db, [c]))[0]!,
    });
    if (options.timer !== false) {
      this.timer = setInterval(() => this.track(this.tick()), Math.max(1000, Math.min(policy.idleMs, policy.ttlMs / 3)));
      this.timer.unref();
    }
  }

  held(): ReadonlyArray<Readonly<Lease>> {
    return [...this.leases.values()];
  }

  async admit(call: AdmittedCall): Promise<Reservation> {
    const worst = BigInt(call.worst_case);
    if (this.closed || worst > this.policy.slice) return this.perCall(call);
    const key = keyOf(call);
    const lease = this.leases.get(key);
    if (lease && lease.amount - lease.carved >= worst) {
      lease.carved += worst;
      lease.lastUsed = this.now();
      const carved = await this.carve({ ...call, lease_id: lease.id }).catch((e: unknown) => {
        lease.carved -= worst;
        throw e;
      });
      if (carved === 'reserved') {
        if (lease.amount - lease.carved < this.policy.slice / 4n) this.topUp(lease);
        return 'reserved';
      }
      // Postgres says the lease cannot: it was closed (returned by a short call, the sweeper, a revocation).
      lease.carved -= worst;
      this.track(this.refresh(key, lease));
    } else if (lease) {
      this.topUp(lease);
    } else {
      this.track(this.take(key, call));
    }
    return this.perCall(call);
  }

  /** The per-call path; a shortfall goes through `holon_admit_tail`, which takes back what leases hold uncarved first. */
  private async perCall(call: AdmittedCall): Promise<Reservation> {
    const first = await admitCall(this.db, call);
    if (first !== 'budget_short' && first !== 'balance_short') return first;
    for (let i = 0; i < TAIL_TRIES; i++) {
      const outcome = await admitTail(this.db, call);
      if (outcome !== 'retry') {
        // This process's lease of that budget may have been among those taken back.
        const lease = this.leases.get(keyOf(call));
        if (outcome !== 'reserved' && lease) this.track(this.refresh(keyOf(call), lease));
        return outcome;
      }
    }
    return admitCall(this.db, call);
  }

  /** A new lease for a budget this process has none of, in the background (one at a time per budget). */
  private async take(key: string, call: AdmittedCall): Promise<void> {
    if (this.taking.has(key) || this.closed) return;
    this.taking.add(key);
    try {
      const id = `lease_${randomBytes(12).toString('hex')}`;
      const at = { id, mandateId: call.mandate_id, account: call.payer, currency: call.currency };
      const figures = await takeLease(this.db, { ...at, ...this.limits() });
      if (figures && !this.closed) this.leases.set(key, { ...at, ...figures, lastUsed: this.now(), topping: false });
      else if (figures) await returnLeases(this.db, [id]);
    } finally {
      this.taking.delete(key);
    }
  }

  private limits() {
    const slice = this.policy.slice;
    return { owner: this.owner, slice, divisor: DIVISOR, min: slice / 8n > 0n ? slice / 8n : 1n, expiresAt: new Date(this.now() + this.policy.ttlMs) };
  }

  /** Bring the lease's uncarved part back up to a slice, in the background. */
  private topUp(lease: Lease): void {
    if (lease.topping || this.closed) return;
    lease.topping = true;
    const key = keyOf({ mandate_id: lease.mandateId, payer: lease.account, currency: lease.currency });
    const run = async () => {
      try {
        const figures = await takeLease(this.db, {
          id: lease.id,
          mandateId: lease.mandateId,
          account: lease.account,
          currency: lease.currency,
          ...this.limits(),
        });
        this.apply(key, lease, figures);
      } finally {
        lease.topping = false;
      }
    };
    this.track(run());
  }

  /** Read the lease's row again (Postgres refused to carve from it, or a short call may have taken it back). */
  private async refresh(key: string, lease: Lease): Promise<void> {
    this.apply(key, lease, await readOpenLease(this.db, lease.id));
  }

  /** The row's figures replace the view; a closed lease leaves it. Carves in flight meanwhile are counted again by the next read. */
  private apply(key: string, lease: Lease, figures: LeaseFigures | null): void {
    if (!figures) {
      if (this.leases.get(key) === lease) this.leases.delete(key);
      return;
    }
    lease.amount = figures.amount;
    lease.carved = figures.carved;
  }

  async tick(): Promise<void> {
    const now = this.now();
    const idle = [...this.leases.entries()].filter(([, l]) => now - l.lastUsed >= this.policy.idleMs);
    for (const [key] of idle) this.leases.delete(key);
    await returnLeases(
      this.db,
      idle.map(([, l]) => l.id),
    );
    const live = [...this.leases.entries()];
    const open = new Set(
      await renewLeases(
        this.db,
        live.map(([, l]) => l.id),
        new Date(now + this.policy.ttlMs),
      ),
    );
    // A lease closed meanwhile (taken back by a short call, the sweeper, a revocation) leaves the view.
    for (const [key, l] of live) if (!open.has(l.id) && this.leases.get(key) === l) this.leases.delete(key);
  }

  private track(p: Promise<unknown>): void {
    const tracked = p.catch(() => undefined).finally(() => this.background.delete(tracked));
    this.background.add(tracked);
  }

  async settled(): Promise<void> {
    while (this.background.size > 0) await Promise.all([...this.background]);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.settled();
    const ids = [...this.leases.values()].map((l) => l.id);
    this.leases.clear();
    await returnLeases(this.db, ids);
  }
}
