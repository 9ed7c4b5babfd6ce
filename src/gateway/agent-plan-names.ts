// The plan name of an agent by its id, for a usage row (which names the agent, not its plan):
// the metrics count tokens and credits by plan. A map built once and rebuilt only after the
// metadata or the config changed, so a row costs one lookup, not a scan of every agent.
import { type Config, canonicalPlanName } from "../config/resolved-config.js";
import type { MetadataRecords } from "../store/metadata-store.js";

export class AgentPlanNames {
  private names = new Map<string, string>();
  private builtFor: Config | null = null;

  constructor(
    private readonly store: MetadataRecords,
    private readonly config: () => Config,
  ) {
    store.onChange(() => {
      this.builtFor = null;
    });
  }

  /** The agent's plan as the config names it ("free" for an unknown agent or plan, as billing does). */
  nameOf(agentId: string): string {
    const config = this.config();
    if (this.builtFor !== config) this.rebuild(config);
    return this.names.get(agentId) ?? "free";
  }

  private rebuild(config: Config): void {
    this.names = new Map(this.store.data.agents.map((agent) => [agent.id, canonicalPlanName(config, agent.plan) ?? "free"]));
    this.builtFor = config;
  }
}
