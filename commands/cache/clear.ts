import { Flags } from "@oclif/core";
import { type CacheCleared, describeTotals, withResponseCache } from "../../src/cli/cache-report.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { printLine } from "../../src/cli/output.js";

export default class CacheClearCommand extends GwCommand {
  static override description = [
    "Remove every entry of the response cache, or one agent's: the next identical request goes upstream (and is billed) again.",
    "",
    "Works while `gw serve` runs: a server finds a removed entry missing and answers that request from upstream. On a home whose state is in Redis, it clears the entries every instance shares.",
  ].join("\n");
  static override examples = ["<%= config.bin %> cache clear", "<%= config.bin %> cache clear --agent research --json"];
  static override enableJsonFlag = true;
  static override flags = {
    agent: Flags.string({ description: "only this agent's entries (name or id)" }),
    json: jsonFlag,
  };

  async run(): Promise<CacheCleared> {
    const { flags } = await this.parse(CacheClearCommand);
    const paths = await openHome(flags.home);
    const cleared = await withResponseCache(paths, flags.agent, "nothing was removed", async (cache, agent): Promise<CacheCleared> => {
      const removed = await cache.clear(agent?.id);
      return { removed, ...(agent ? { agent } : {}) };
    });
    return this.shown(cleared, () => {
      printLine(`removed ${describeTotals(cleared.removed)} from the response cache${cleared.agent ? ` (agent ${cleared.agent.name})` : ""}`);
    });
  }
}
