// The usage row every endpoint settles, built in one place: who made the call (the caller's agent
// and key, the request and its tags) around what the call was and cost. The fields keep the order
// rows have always had, and a request without tags gives a row without `tags`, so such rows are
// byte for byte what they were before tags existed.
import type { Caller } from "../auth/key-authenticator.js";
import type { UsageEntry } from "./credit-ledger.js";

/** Who a usage row names: every call context has these (tags only when the request had some). */
export interface RowOwner {
  caller: Caller;
  requestId: string;
  tags?: readonly string[];
}

/** What the call was and cost. */
export type CallUsage = Pick<UsageEntry, "endpoint" | "model" | "provider" | "units" | "credits">;

export function usageEntry(owner: RowOwner, call: CallUsage): UsageEntry {
  const entry: UsageEntry = {
    agent: owner.caller.agent.id,
    keyPrefix: owner.caller.key.prefix,
    endpoint: call.endpoint,
    model: call.model,
    provider: call.provider,
    units: call.units,
    credits: call.credits,
    requestId: owner.requestId,
  };
  if (owner.tags) entry.tags = owner.tags;
  return entry;
}
