import { Args } from "@oclif/core";
import { disableTool, KNOWN_TOOLS } from "../../src/admin/config-edits/tools.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { editHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";

export default class ToolsDisable extends GwCommand {
  static override description =
    "Take MODEL off TOOL's allowlist in config.json. When it was the default, the next allowed model becomes the default, or none (an image tool with none enabled answers 503). A running server picks the change up without a restart.";
  static override examples = ["<%= config.bin %> tools disable upscale local/lanczos"];
  static override args = {
    tool: Args.string({ description: `tool: ${KNOWN_TOOLS.join(", ")}`, required: true }),
    model: Args.string({ description: "model id", required: true }),
  };
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, ...remoteAdminFlags };

  async run() {
    const { args, flags } = await this.parse(ToolsDisable);
    const admin = remoteAdmin(flags);
    const result = admin
      ? await remotely(() => admin.disableTool(args.tool, args.model))
      : (await editHomeConfig(await openHome(flags.home), (raw) => disableTool(raw, args.tool, args.model))).result;
    return this.shown(result, () => {
      printLine(`disabled ${args.model} for ${args.tool}; default: ${result.default ?? "none"}`);
    });
  }
}
