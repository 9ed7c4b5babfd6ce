// The credit store of one gw process: used credits are the usage log's in-memory totals, holds
// live in this process's memory. Check-then-hold is atomic because it runs in one turn of the
// event loop; a restart loses the holds of calls in flight with the calls themselves, and a
// running video job's hold is taken again (keepUnchecked) when the server starts.
import { randomUUID } from "node:crypto";
import type { CreditAccount, CreditBalance, CreditHold, CreditStore, HoldOutcome } from "./credit-store.js";
import { spendableOf } from "./credit-store.js";
import { LocalRateBuckets } from "./local-rate-buckets.js";
import type { RateTake } from "./rate-buckets.js";
import type { UsageLog, UsageRow } from "./usage-log.js";

export class LocalCreditStore implements CreditStore {
  /** Open holds by id: a hold is returned once, however often it is released or settled. */
  private readonly open = new Map<string, CreditHold>();
  private readonly heldByAgent = new Map<string, number>();
  private readonly heldByKey = new Map<string, number>();
  private readonly keptByName = new Map<string, CreditHold>();
  /** Hold id -> the name it is kept under. */
  private readonly keptNames = new Map<string, string>();

  constructor(
    private readonly log: Pick<UsageLog, "append" | "creditsUsed" | "keyCreditsUsed" | "keyCreditsLifetime" | "hasRow">,
    /** The process's rate buckets, which a hold with a take counts the request in. */
    private readonly rates = new LocalRateBuckets(),
  ) {}

  hold(account: CreditAccount, want: number, atLeast: number, period: string, take?: RateTake): Promise<HoldOutcome> {
    const taken = take && { admission: this.rates.take(take.key, take.requestsPerMinute, take.tokensPerMinute) };
    if (taken?.admission.refusedBy) return Promise.resolve(taken);
    const spendable = spendableOf(account, this.balanceNow(account, period));
    const amount = Math.min(want, spendable.credits);
    if (spendable.credits <= 0 || amount < atLeast) return Promise.resolve({ spendable, ...taken });
    return Promise.resolve({ held: this.take(randomUUID(), account.agentId, amount, account.key?.prefix), ...taken });
  }

  settle(hold: CreditHold | null, row: UsageRow): Promise<void> {
    let written: Promise<void>;
    try {
      written = this.log.append(row); // checks the row and counts it at once, or throws
    } catch (error) {
      return Promise.reject(error);
    }
    if (hold) this.drop(hold);
    return written;
  }

  release(hold: CreditHold): Promise<void> {
    this.drop(hold);
    return Promise.resolve();
  }

  keep(name: string, hold: CreditHold): Promise<void> {
    if (this.open.has(hold.id)) this.name(name, hold);
    return Promise.resolve();
  }

  keepUnchecked(name: string, agentId: string, amount: number, keyPrefix?: string): Promise<CreditHold> {
    let hold = this.keptByName.get(name);
    if (!hold) {
      hold = this.take(randomUUID(), agentId, amount, keyPrefix);
      this.name(name, hold);
    }
    return Promise.resolve(hold);
  }

  kept(name: string): Promise<CreditHold | undefined> {
    return Promise.resolve(this.keptByName.get(name));
  }

  balance(account: CreditAccount, period: string): Promise<CreditBalance> {
    return Promise.resolve(this.balanceNow(account, period));
  }

  hasRow(rowId: string, periods: readonly string[]): Promise<boolean> {
    return Promise.resolve(this.log.hasRow(rowId, periods));
  }

  private balanceNow(account: CreditAccount, period: string): CreditBalance {
    const planUsed = this.log.creditsUsed(account.agentId, period);
    const planHeld = this.heldByAgent.get(account.agentId) ?? 0;
    const key = account.key;
    if (!key) return { planUsed, planHeld, keySpent: 0, keyHeld: 0 };
    const keySpent = key.budget.period === "total" ? this.log.keyCreditsLifetime(key.prefix, period) : this.log.keyCreditsUsed(key.prefix, period);
    return { planUsed, planHeld, keySpent, keyHeld: this.heldByKey.get(key.prefix) ?? 0 };
  }

  private take(id: string, agentId: string, amount: number, keyPrefix: string | undefined): CreditHold {
    const hold: CreditHold = { id, agentId, keyPrefix, amount };
    this.open.set(id, hold);
    add(this.heldByAgent, agentId, amount);
    if (keyPrefix !== undefined) add(this.heldByKey, keyPrefix, amount);
    return hold;
  }

  private drop(hold: CreditHold): void {
    if (!this.open.delete(hold.id)) return;
    add(this.heldByAgent, hold.agentId, -hold.amount);
    if (hold.keyPrefix !== undefined) add(this.heldByKey, hold.keyPrefix, -hold.amount);
    const name = this.keptNames.get(hold.id);
    if (name === undefined) return;
    this.keptNames.delete(hold.id);
    this.keptByName.delete(name);
  }

  private name(name: string, hold: CreditHold): void {
    this.keptByName.set(name, hold);
    this.keptNames.set(hold.id, name);
  }
}

function add(totals: Map<string, number>, name: string, amount: number): void {
  const total = (totals.get(name) ?? 0) + amount;
  if (total > 0) totals.set(name, total);
  else totals.delete(name);
}
