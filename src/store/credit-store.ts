// The state under the credit ledger: balances, holds and the usage rows that spend them. One
// process keeps it in memory over its usage log (LocalCreditStore); several gw instances share it
// in Redis (RedisCreditStore), where every step below is one atomic script. The ledger
// (gateway/billing/credit-ledger.ts) sizes, caps and words the 402s; this only counts, so the two
// implementations answer the same conformance suite (test/state/credit-store.conformance.ts).
import type { Admission, RateTake } from "./rate-buckets.js";
import type { KeyBudget } from "./records.js";
import type { UsageRow } from "./usage-log.js";

/** Who pays for a call: the agent's plan allowance for the period, and its key's budget when it has one. */
export interface CreditAccount {
  agentId: string;
  /** The plan's credits per period. */
  allowance: number;
  /** The calling key, when it has a budget of its own. */
  key?: { prefix: string; budget: KeyBudget };
}

/** What an account may still spend, and which limit that is (the smaller one; "plan" on a tie). */
export interface Spendable {
  credits: number;
  limit: "plan" | "key";
}

/** Credits held for a call in flight (or a job still running, when kept under a name). */
export interface CreditHold {
  readonly id: string;
  readonly agentId: string;
  /** The key whose budget the hold also counts against (only keys with a budget). */
  readonly keyPrefix?: string;
  readonly amount: number;
}

/**
 * A hold, or what is spendable when nothing was held; with a rate take, its admission too (a
 * refused take holds nothing and reports no spendable).
 */
export type HoldOutcome = (
  | { held: CreditHold; spendable?: undefined }
  | { held?: undefined; spendable: Spendable }
  | { held?: undefined; spendable?: undefined }
) & {
  admission?: Admission;
};

/** The numbers an account's balance is made of, for one period. */
export interface CreditBalance {
  /** Plan credits billed to the agent in the period. */
  planUsed: number;
  /** Plan credits held by the agent's holds now. */
  planHeld: number;
  /** Credits billed to the key within its budget's period (0 without a budget). */
  keySpent: number;
  /** Credits held against the key's budget now (0 without a budget). */
  keyHeld: number;
}

export interface CreditStore {
  /**
   * Atomically, against both limits: when something is spendable, hold `min(want, spendable)`
   * credits if that is at least `atLeast`; otherwise hold nothing and say what is spendable. `period` is the
   * current one ("2026-11"): a key with a lifetime budget counts every period up to it.
   * With `take`, first take one request from the key's rate buckets (RateLimitBuckets.admit) in
   * the same step, and answer its admission: a refused take holds nothing. A request counted this
   * way costs a shared store one round trip for both, not two.
   */
  hold(account: CreditAccount, want: number, atLeast: number, period: string, take?: RateTake): Promise<HoldOutcome>;
  /**
   * Write the usage row and release the hold (when there is one and it is still held) as one
   * step. The row's credits are billed as given: the ledger has already capped them. Resolves
   * once the row is durable. A refused row (StoreError) is not written and leaves the hold held.
   * Shared stores, whose settle may be retried after a lost reply, write a row id once; the local
   * one relies on its callers (a recovered job asks hasRow first).
   */
  settle(hold: CreditHold | null, row: UsageRow): Promise<void>;
  /** Return a hold's credits. Releasing a hold twice, or one already settled, does nothing. */
  release(hold: CreditHold): Promise<void>;
  /**
   * Make a hold outlive its request under a name (a video job's id): no lease expires it, and
   * `kept(name)` finds it from any instance until it is settled or released.
   */
  keep(name: string, hold: CreditHold): Promise<void>;
  /**
   * Hold credits under a name without a check, unless a hold of that name exists (then return
   * that one): a job recovered after a restart holds what it held before, once.
   */
  keepUnchecked(name: string, agentId: string, amount: number, keyPrefix?: string): Promise<CreditHold>;
  kept(name: string): Promise<CreditHold | undefined>;
  balance(account: CreditAccount, period: string): Promise<CreditBalance>;
  /** Whether a row named in advance was written in one of these periods (a job recovered after a restart asks). */
  hasRow(rowId: string, periods: readonly string[]): Promise<boolean>;
}

/** What is spendable under an account's two limits, from its balance. */
export function spendableOf(account: CreditAccount, balance: CreditBalance): Spendable {
  const plan = account.allowance - balance.planUsed - balance.planHeld;
  if (!account.key) return { credits: plan, limit: "plan" };
  const key = account.key.budget.credits - balance.keySpent - balance.keyHeld;
  return key < plan ? { credits: key, limit: "key" } : { credits: plan, limit: "plan" };
}
