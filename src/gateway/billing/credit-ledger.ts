// Credit balances per agent and period, and per key for keys with their own budget, over a credit
// store (store/credit-store.ts: this process's, or Redis shared by several instances). In-flight
// requests hold reservations so a burst of
// parallel requests cannot spend more than the balance. A reservation settles to the real usage
// when the call ends, never to more than it held: an upstream that reports or produces more than
// the call could cost leaves the excess on the row as `overage`, unbilled (docs/decisions.md §3).
// A call must fit both its agent's plan and its key's budget (docs/decisions.md §10).
import { randomUUID } from "node:crypto";
import type { PlanLimits } from "../../config/config-schema.js";
import type { CreditAccount, CreditBalance, CreditHold, CreditStore, HoldOutcome, Spendable } from "../../store/credit-store.js";
import { spendableOf } from "../../store/credit-store.js";
import { periodOf, type UsageRow } from "../../store/usage-log.js";
import type { Caller } from "../auth/key-authenticator.js";
import type { DeferredAdmission } from "../auth/rate-limiter.js";
import { InsufficientCreditsError } from "../errors.js";

export type { Spendable };

/** Who pays: the caller's agent under its plan, and the caller's key. Every call context has both. */
export interface Account {
  caller: Caller;
  plan: PlanLimits;
}

export interface Reservation {
  readonly hold: CreditHold;
  readonly amount: number;
  /** Settled or released: its credits are no longer this reservation's to give back. */
  settled: boolean;
}

export type UsageEntry = Omit<UsageRow, "id" | "time" | "overage">;

export interface SettleOptions {
  /** Names the row in advance, so a caller that records it can tell after a crash whether it was written. */
  rowId?: string;
  /** The most this call may cost when less than the reservation (the route candidate that served it). */
  bound?: number;
}

/** What GET /v1/key reports: the plan's and the key's numbers, reservations in flight deducted from what remains. */
export interface AccountBalance extends CreditBalance {
  spendable: Spendable;
}

export class CreditLedger {
  constructor(
    private readonly store: CreditStore,
    private readonly now: () => Date = () => new Date(),
    /** Told of every row once it is written (the access log). */
    private readonly onRecorded?: (row: UsageRow) => void,
    /** The server's log: a call whose usage came to more than it held, a release the store did not take. */
    private readonly warn?: (message: string) => void,
  ) {}

  /** The account's balance this period, and what it may still spend. */
  async balance(account: Account): Promise<AccountBalance> {
    const credits = creditAccount(account);
    const balance = await this.store.balance(credits, periodOf(this.now()));
    return { ...balance, spendable: spendableOf(credits, balance) };
  }

  /** An agent's plan this period, whichever key calls: credits billed, and what remains with holds deducted. */
  async planBalance(agentId: string, allowance: number): Promise<{ used: number; remaining: number }> {
    const balance = await this.store.balance({ agentId, allowance }, periodOf(this.now()));
    return { used: balance.planUsed, remaining: allowance - balance.planUsed - balance.planHeld };
  }

  /** The smaller of the plan's and the key's credits left. */
  async spendable(account: Account): Promise<Spendable> {
    const credits = creditAccount(account);
    return spendableOf(credits, await this.store.balance(credits, periodOf(this.now())));
  }

  /** Refuse with 402 unless `amount` credits are left under both limits (nothing is held). */
  async requireAvailable(account: Account, amount: number): Promise<void> {
    const { credits, limit } = await this.spendable(account);
    if (credits <= 0 || credits < amount)
      throw new InsufficientCreditsError(Math.max(0, credits), amount, undefined, this.describeLimit(account.caller, limit));
  }

  /** Hold `amount` credits or refuse with 402 before any upstream call. */
  async reserve(account: Account, amount: number): Promise<Reservation> {
    const outcome = await this.store.hold(creditAccount(account), amount, amount, periodOf(this.now()));
    if (!outcome.held) {
      const { credits, limit } = spendableIn(outcome);
      throw new InsufficientCreditsError(Math.max(0, credits), amount, undefined, this.describeLimit(account.caller, limit));
    }
    return { hold: outcome.held, amount: outcome.held.amount, settled: false };
  }

  /**
   * Hold what `plan` sizes the call at for the account's balance, or refuse with the 402 `plan`
   * throws. When the balance covers the call's worst case (`plan` with no limit), that is one
   * step: the hold itself checks the balance, with no read before it (one Redis round trip, not
   * two). Only a call its balance cannot cover in full is sized again for what is spendable (a
   * smaller max_tokens filled in, fallbacks left out) and held then, as `reserve` does. A request
   * whose rate take is still `pending` makes it in the first hold (429 when refused, nothing held).
   */
  async reservePlanned<Plan extends { amount: number }>(
    account: Account,
    plan: (remaining: number, limit: string) => Plan,
    admission?: DeferredAdmission,
  ): Promise<{ planned: Plan; reservation: Reservation }> {
    const credits = creditAccount(account);
    const whole = plan(Number.POSITIVE_INFINITY, this.describeLimit(account.caller, "plan"));
    const take = admission?.pending;
    const outcome = await this.store.hold(credits, whole.amount, whole.amount, periodOf(this.now()), take);
    if (take) {
      if (!outcome.admission) throw new Error("the credit store made no rate take with its hold");
      admission?.taken(outcome.admission); // 429 when refused: then nothing was held
    }
    if (outcome.held) return { planned: whole, reservation: { hold: outcome.held, amount: outcome.held.amount, settled: false } };
    const { credits: spendable, limit } = spendableIn(outcome);
    const planned = plan(spendable, this.describeLimit(account.caller, limit));
    return { planned, reservation: await this.reserve(account, planned.amount) };
  }

  /**
   * Debit the usage row's credits, at most what was held (and at most `bound`), and release the
   * reservation; resolves once the row is written. Every endpoint settles here: this is where the
   * reservation's promise is kept whatever the upstream reported.
   */
  async settle(reservation: Reservation, entry: UsageEntry, options: SettleOptions = {}): Promise<UsageRow> {
    const held = Math.min(reservation.amount, options.bound ?? reservation.amount);
    let billed: UsageEntry & Pick<UsageRow, "overage"> = entry;
    if (entry.credits > held) {
      const overage = entry.credits - held;
      this.warn?.(
        `provider ${entry.provider} overran what request ${entry.requestId} held: its usage comes to ${entry.credits} credits, billed ${held}, overage ${overage} credits not billed`,
      );
      billed = { ...entry, credits: held, overage };
    }
    if (reservation.settled) return this.record(billed, options.rowId);
    reservation.settled = true;
    try {
      return await this.write(reservation.hold, billed, options.rowId);
    } catch (error) {
      this.giveBack(reservation.hold);
      throw error;
    }
  }

  /** A row for free work (local OCR): nothing reserved, so never refused; resolves once written. */
  record(entry: UsageEntry & Pick<UsageRow, "overage">, rowId: string = randomUUID()): Promise<UsageRow> {
    return this.write(null, entry, rowId);
  }

  /** Whether a row named in advance was written in one of these periods (a job recovered after a restart asks). */
  rowWritten(rowId: string, periods: readonly string[]): Promise<boolean> {
    return this.store.hasRow(rowId, periods);
  }

  /** How a 402 names the limit that ran out. */
  describeLimit(caller: Caller, limit: Spendable["limit"]): string {
    const budget = caller.key.budget;
    if (limit === "plan" || !budget) return "this period on the agent's plan";
    return budget.period === "total" ? `of this key's lifetime budget of ${budget.credits}` : `this month of this key's budget of ${budget.credits} a month`;
  }

  /**
   * Keep a reservation under a name (a video job's id) after its request has ended: whatever
   * finishes the job later (the poller, after a restart too, on any instance) finds it with `keptOrHeld`.
   */
  keep(name: string, reservation: Reservation): Promise<void> {
    return this.store.keep(name, reservation.hold);
  }

  /**
   * The reservation kept under `name`, held now without a check when there is none: a job that
   * was running before a restart holds what it held, even if the balance has moved since.
   */
  async keptOrHeld(name: string, agentId: string, amount: number, keyPrefix?: string): Promise<Reservation> {
    const hold = await this.store.keepUnchecked(name, agentId, amount, keyPrefix);
    return { hold, amount: hold.amount, settled: false };
  }

  /** Release a kept reservation (if it is not settled yet) and forget its name. */
  async releaseKept(name: string): Promise<void> {
    const hold = await this.store.kept(name);
    if (hold) await this.store.release(hold);
  }

  /**
   * Give the reservation's credits back. Never fails its caller: a release the store did not take
   * is logged, and the hold's lease returns the credits instead.
   */
  release(reservation: Reservation): void {
    if (reservation.settled) return;
    reservation.settled = true;
    this.giveBack(reservation.hold);
  }

  private giveBack(hold: CreditHold): void {
    this.store.release(hold).catch((error: unknown) => {
      this.warn?.(
        `credits held by ${hold.agentId} not released now (${error instanceof Error ? error.message : String(error)}); they return when the hold's lease ends`,
      );
    });
  }

  private async write(hold: CreditHold | null, entry: UsageEntry & Pick<UsageRow, "overage">, rowId: string = randomUUID()): Promise<UsageRow> {
    const row: UsageRow = { id: rowId, time: this.now().toISOString(), ...entry };
    await this.store.settle(hold, row);
    this.onRecorded?.(row);
    return row;
  }
}

/** What a hold that held nothing says is spendable (a hold made with no rate take always says). */
function spendableIn(outcome: HoldOutcome): Spendable {
  if (!outcome.spendable) throw new Error("the credit store held nothing and said nothing spendable");
  return outcome.spendable;
}

/** The store's view of who pays: the agent's plan allowance and the key's budget, when it has one. */
function creditAccount({ caller, plan }: Account): CreditAccount {
  const budget = caller.key.budget;
  return { agentId: caller.agent.id, allowance: plan.monthlyCredits, key: budget && { prefix: caller.key.prefix, budget } };
}
