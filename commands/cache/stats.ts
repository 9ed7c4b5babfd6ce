import { Flags } from "@oclif/core";
import { type CacheStats, describeTotals, withResponseCache } from "../../src/cli/cache-report.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { loadHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { exactSize } from "../../src/text/byte-sizes.js";

export default class CacheStatsCommand extends GwCommand {
  static override description = [
    "The response cache's live entries and their bytes (the cached answers' bodies), over every agent or one agent's, and its bound (cache.maxBytes; the least recently used entries go first).",
    "",
    "Hits, misses and stores are counted by the server: the gw_cache_* series of GET /metrics. Works whether or not `gw serve` runs; on a home whose state is in Redis, it reads the entries every instance shares.",
  ].join("\n");
  static override examples = ["<%= config.bin %> cache stats", "<%= config.bin %> cache stats --agent research --json"];
  static override enableJsonFlag = true;
  static override flags = {
    agent: Flags.string({ description: "also this agent's part (name or id)" }),
    json: jsonFlag,
  };

  async run(): Promise<CacheStats> {
    const { flags } = await this.parse(CacheStatsCommand);
    const paths = await openHome(flags.home);
    const { maxBytes } = (await loadHomeConfig(paths)).cache;
    const stats = await withResponseCache(paths, flags.agent, "no report was made", async (cache, agent): Promise<CacheStats> => {
      const whole = await cache.totals();
      return { ...whole, maxBytes, ...(agent ? { agent: { ...agent, ...(await cache.totals(agent.id)) } } : {}) };
    });
    return this.shown(stats, () => {
      if (stats.agent) printLine(`agent ${stats.agent.name}: ${describeTotals(stats.agent)}`);
      printLine(`response cache: ${describeTotals(stats)} of ${exactSize(stats.maxBytes)} (cache.maxBytes)`);
      printLine("hits and misses: the gw_cache_* series of GET /metrics");
    });
  }
}
