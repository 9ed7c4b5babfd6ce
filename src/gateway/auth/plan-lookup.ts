// Which plan a caller is on: its agent's plan name as the config now resolves it (aliases such as
// Assistant and Engineer included), `free` when the config knows no such plan. Read per request,
// so a `gw agents set --plan` or a config reload takes effect at the next one.
import type { PlanLimits } from "../../config/config-schema.js";
import { type Config, canonicalPlanName } from "../../config/resolved-config.js";
import type { AgentRecord } from "../../store/records.js";
import type { Caller } from "./key-authenticator.js";

export interface CallerPlan {
  name: string;
  limits: PlanLimits;
}

export class PlanLookup {
  constructor(
    private readonly config: () => Config,
    private readonly agents: () => readonly AgentRecord[],
  ) {}

  /** The caller's plan, by name and limits. */
  of(caller: Caller): CallerPlan {
    return this.named(caller.agent.plan);
  }

  /** An agent's plan limits now, by its id (a video job finishing after its request is gone). */
  ofAgent(agentId: string): PlanLimits {
    const agent = this.agents().find((candidate) => candidate.id === agentId);
    return this.named(agent?.plan ?? "free").limits;
  }

  private named(plan: string): CallerPlan {
    const config = this.config();
    const name = canonicalPlanName(config, plan) ?? "free";
    const limits = config.resolvedPlans[name];
    // The config's schema always resolves the free plan.
    if (!limits) throw new Error(`the config resolves no plan named ${name}`);
    return { name, limits };
  }
}
