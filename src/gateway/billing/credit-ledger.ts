// Credit balances per agent and period, and per key for keys with their own budget. Used credits
// come from the usage log's in-memory totals; in-flight requests hold reservations so a burst of
// parallel requests cannot spend more than the balance. A reservation settles to the real usage
// when the call ends, never to more than it held: an upstream that reports or produces more than
// the call could cost leaves the excess on the row as `overage`, unbilled (docs/decisions.md §3).
// A call must fit both its agent's plan and its key's budget (docs/decisions.md §10).
import { randomUUID } from "node:crypto";
import type { PlanLimits } from "../../config/config-schema.js";
import type { KeyBudget } from "../../store/records.js";
import { periodOf, type UsageRecords, type UsageRow } from "../../store/usage-log.js";
import type { Caller } from "../auth/key-authenticator.js";
import { InsufficientCreditsError } from "../errors.js";

/** Who pays: the caller's agent under its plan, and the caller's key. Every call context has both. */
export interface Account {
  caller: Caller;
  plan: PlanLimits;
}

export interface Reservation {
  agentId: string;
  /** The key whose budget the reservation also holds (only keys with a budget). */
  keyPrefix?: string;
  amount: number;
  settled: boolean;
}

/** What an account may still spend, and which limit that is. */
export interface Spendable {
  credits: number;
  limit: "plan" | "key";
}

export type UsageEntry = Omit<UsageRow, "id" | "time" | "overage">;

export interface SettleOptions {
  /** Names the row in advance, so a caller that records it can tell after a crash whether it was written. */
  rowId?: string;
  /** The most this call may cost when less than the reservation (the route candidate that served it). */
  bound?: number;
}

export class CreditLedger {
  private readonly reserved = new Map<string, number>();
  private readonly reservedByKey = new Map<string, number>();
  /** Reservations that outlive their request (a running video job's), by name. */
  private readonly kept = new Map<string, Reservation>();

  constructor(
    private readonly log: UsageRecords,
    private readonly now: () => Date = () => new Date(),
    /** Told of every row once it is written (the access log). */
    private readonly onRecorded?: (row: UsageRow) => void,
    /** The server's log: a call whose usage came to more than it held. */
    private readonly warn?: (message: string) => void,
  ) {}

  used(agentId: string): number {
    return this.log.creditsUsed(agentId, periodOf(this.now()));
  }

  /** The agent's plan credits left this period, reservations deducted. */
  remaining(agentId: string, allowance: number): number {
    return allowance - this.used(agentId) - (this.reserved.get(agentId) ?? 0);
  }

  /** Credits a key with a budget has spent in its budget's period (this month, or its whole life). */
  keySpent(keyPrefix: string, budget: KeyBudget): number {
    const period = periodOf(this.now());
    return budget.period === "total" ? this.log.keyCreditsLifetime(keyPrefix, period) : this.log.keyCreditsUsed(keyPrefix, period);
  }

  /** The key's budget left, reservations deducted; Infinity for a key without one. */
  keyRemaining(caller: Caller): number {
    const budget = caller.key.budget;
    if (!budget) return Number.POSITIVE_INFINITY;
    return budget.credits - this.keySpent(caller.key.prefix, budget) - (this.reservedByKey.get(caller.key.prefix) ?? 0);
  }

  /** The smaller of the plan's and the key's credits left. */
  spendable(account: Account): Spendable {
    const plan = this.remaining(account.caller.agent.id, account.plan.monthlyCredits);
    const key = this.keyRemaining(account.caller);
    return key < plan ? { credits: key, limit: "key" } : { credits: plan, limit: "plan" };
  }

  /** Refuse with 402 unless `amount` credits are left under both limits (nothing is held). */
  requireAvailable(account: Account, amount: number): void {
    const { credits, limit } = this.spendable(account);
    if (credits <= 0 || credits < amount)
      throw new InsufficientCreditsError(Math.max(0, credits), amount, undefined, this.describeLimit(account.caller, limit));
  }

  /** Hold `amount` credits or refuse with 402 before any upstream call. */
  reserve(account: Account, amount: number): Reservation {
    this.requireAvailable(account, amount);
    return this.hold(account.caller.agent.id, amount, account.caller.key.budget ? account.caller.key.prefix : undefined);
  }

  /**
   * Hold `amount` without a check: a reservation made before a restart (a video job still running)
   * is held again as it was, even if the balance has moved since.
   */
  hold(agentId: string, amount: number, keyPrefix?: string): Reservation {
    this.reserved.set(agentId, (this.reserved.get(agentId) ?? 0) + amount);
    if (keyPrefix !== undefined) this.reservedByKey.set(keyPrefix, (this.reservedByKey.get(keyPrefix) ?? 0) + amount);
    return { agentId, keyPrefix, amount, settled: false };
  }

  /**
   * Debit the usage row's credits, at most what was held (and at most `bound`), and release the
   * reservation; resolves once the row is written. Every endpoint settles here: this is where the
   * reservation's promise is kept whatever the upstream reported.
   */
  settle(reservation: Reservation, entry: UsageEntry, options: SettleOptions = {}): Promise<UsageRow> {
    this.release(reservation);
    const held = Math.min(reservation.amount, options.bound ?? reservation.amount);
    if (entry.credits <= held) return this.record(entry, options.rowId);
    const overage = entry.credits - held;
    this.warn?.(
      `provider ${entry.provider} overran what request ${entry.requestId} held: its usage comes to ${entry.credits} credits, billed ${held}, overage ${overage} credits not billed`,
    );
    return this.record({ ...entry, credits: held, overage }, options.rowId);
  }

  /** A row for free work (local OCR): nothing reserved, so never refused; resolves once written. */
  async record(entry: UsageEntry & Pick<UsageRow, "overage">, rowId: string = randomUUID()): Promise<UsageRow> {
    const row: UsageRow = { id: rowId, time: this.now().toISOString(), ...entry };
    await this.log.append(row);
    this.onRecorded?.(row);
    return row;
  }

  /** How a 402 names the limit that ran out. */
  describeLimit(caller: Caller, limit: Spendable["limit"]): string {
    const budget = caller.key.budget;
    if (limit === "plan" || !budget) return "this period on the agent's plan";
    return budget.period === "total" ? `of this key's lifetime budget of ${budget.credits}` : `this month of this key's budget of ${budget.credits} a month`;
  }

  /**
   * Keep a reservation under a name (a video job's id) after its request has ended: whatever
   * finishes the job later (the poller, after a restart too) finds it with `keptFor`.
   */
  keep(name: string, reservation: Reservation): void {
    this.kept.set(name, reservation);
  }

  keptFor(name: string): Reservation | undefined {
    return this.kept.get(name);
  }

  /** Release a kept reservation (if it is not settled yet) and forget its name. */
  releaseKept(name: string): void {
    const reservation = this.kept.get(name);
    if (reservation) this.release(reservation);
    this.kept.delete(name);
  }

  release(reservation: Reservation): void {
    if (reservation.settled) return;
    reservation.settled = true;
    subtract(this.reserved, reservation.agentId, reservation.amount);
    if (reservation.keyPrefix !== undefined) subtract(this.reservedByKey, reservation.keyPrefix, reservation.amount);
  }
}

function subtract(totals: Map<string, number>, name: string, amount: number): void {
  const left = (totals.get(name) ?? 0) - amount;
  if (left > 0) totals.set(name, left);
  else totals.delete(name);
}
