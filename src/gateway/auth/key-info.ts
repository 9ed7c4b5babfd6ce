// GET /v1/key: a key reads its own limits and spend (OpenRouter has the same). Nothing here names
// another key or the agent's other keys.
import type { PlanLimits } from "../../config/config-schema.js";
import type { CreditLedger } from "../billing/credit-ledger.js";
import type { Caller } from "./key-authenticator.js";

export interface KeyInfo {
  label: string | null;
  prefix: string;
  agent: string;
  plan: string;
  created_at: string;
  expires_at: string | null;
  /** The key's model patterns; null when it may call every model its plan reaches. */
  models: string[] | null;
  rate_limit: { requests_per_minute: number; tokens_per_minute: number | null };
  /** The key's own budget; null when only the plan limits it. */
  budget: { limit: number; period: "month" | "total"; spent: number; remaining: number } | null;
  /** Seconds the response cache keeps this key's answers (docs/decisions.md §22); null when the key does not cache. */
  cache_ttl_seconds: number | null;
  /** The agent's plan this month (UTC), shared by the agent's keys. */
  plan_credits: { limit: number; spent: number; remaining: number };
  /** What this key can spend now: the smaller of the two, reservations of calls in flight deducted. */
  limit_remaining: number;
}

export async function keyInfo(ledger: CreditLedger, caller: Caller, plan: { name: string; limits: PlanLimits }): Promise<{ data: KeyInfo }> {
  const { key, agent } = caller;
  const balance = await ledger.balance({ caller, plan: plan.limits });
  const budget = key.budget && {
    limit: key.budget.credits,
    period: key.budget.period,
    spent: balance.keySpent,
    remaining: Math.max(0, key.budget.credits - balance.keySpent - balance.keyHeld),
  };
  return {
    data: {
      label: key.name ?? null,
      prefix: key.prefix,
      agent: agent.name,
      plan: plan.name,
      created_at: key.createdAt,
      expires_at: key.expiresAt ?? null,
      models: key.models ?? null,
      rate_limit: { requests_per_minute: Math.min(plan.limits.requestsPerMinute, key.rpm ?? Number.POSITIVE_INFINITY), tokens_per_minute: key.tpm ?? null },
      budget: budget ?? null,
      cache_ttl_seconds: key.cacheTtlSeconds ?? null,
      plan_credits: {
        limit: plan.limits.monthlyCredits,
        spent: balance.planUsed,
        remaining: Math.max(0, plan.limits.monthlyCredits - balance.planUsed - balance.planHeld),
      },
      limit_remaining: Math.max(0, balance.spendable.credits),
    },
  };
}
