import { toolOverview } from "../../src/admin/config-edits/tools.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { loadHomeConfig } from "../../src/cli/home-config.js";
import { printTable } from "../../src/cli/output.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";

export default class ToolsList extends GwCommand {
  static override description =
    "List the tools (image, upscale, background, describe ...): each one's default model, its allowlist, and for image tools the catalog models that could be enabled (with `gw tools enable`). A model whose provider is not configured is marked (no provider).";
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, ...remoteAdminFlags };

  async run() {
    const { flags } = await this.parse(ToolsList);
    const admin = remoteAdmin(flags);
    const tools = admin ? await remotely(() => admin.tools()) : toolOverview(await loadHomeConfig(await openHome(flags.home)));
    return this.shown(tools, () => {
      printTable(
        ["TOOL", "DEFAULT", "ALLOWED", "CAN BE ENABLED"],
        tools.map((tool) => [
          tool.tool,
          tool.default,
          tool.allow.join(", "),
          tool.available?.map((model) => (model.providerConfigured ? model.id : `${model.id} (no provider)`)).join(", "),
        ]),
      );
    });
  }
}
