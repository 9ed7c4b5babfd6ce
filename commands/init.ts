import { Flags } from "@oclif/core";
import { GwCommand } from "../src/cli/gw-command.js";
import { initHome } from "../src/config/init-home.js";
import { resolveHome } from "../src/config/paths.js";

export default class Init extends GwCommand {
  static override summary = "Create a gw home: config.json and the metadata store (idempotent).";
  static override enableJsonFlag = true;
  static override flags = {
    home: Flags.string({ description: "gw home directory (default: $GW_HOME or ~/.gw)" }),
  };

  async run(): Promise<{ home: string; config: string; createdConfig: boolean; createdMetadata: boolean }> {
    const { flags } = await this.parse(Init);
    let result: Awaited<ReturnType<typeof initHome>>;
    try {
      result = await initHome(resolveHome(flags.home));
    } catch (error) {
      this.error((error as Error).message, { exit: 1 });
    }
    const summary = { home: result.paths.home, config: result.paths.config, createdConfig: result.createdConfig, createdMetadata: result.createdMetadata };
    this.log(`${result.createdConfig ? "created" : "kept"} ${result.paths.config}`);
    this.log(`${result.createdMetadata ? "created" : "kept"} ${result.paths.metadata}`);
    return summary;
  }
}
