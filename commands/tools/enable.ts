import { Args, Flags } from "@oclif/core";
import { enableTool, KNOWN_TOOLS } from "../../src/admin/config-edits/tools.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { editHomeConfig } from "../../src/cli/home-config.js";
import { note, printLine } from "../../src/cli/output.js";
import { implementedProviderTypes } from "../../src/cli/provider-types.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";

export default class ToolsEnable extends GwCommand {
  static override description =
    "Allow MODEL for TOOL in config.json (tools.TOOL.allow), and make it the default when the tool has none or with --default. Image tools (image, upscale, background) take models of the image catalog that do their work, speech and transcription models of the audio catalog (gw catalog audio); describe and enhance take chat model ids a route leads to; ocr takes PROVIDER/tesseract (a provider of type local); the others take PROVIDER/MODEL with a configured provider of a type gw implements. A running server picks the change up without a restart.";
  static override examples = [
    "<%= config.bin %> tools enable upscale local/lanczos",
    "<%= config.bin %> tools enable background local/flat-background",
    "<%= config.bin %> tools enable image openai/gpt-image-1 --default",
    "<%= config.bin %> tools enable transcription openai/whisper-1",
  ];
  static override args = {
    tool: Args.string({ description: `tool: ${KNOWN_TOOLS.join(", ")}`, required: true }),
    model: Args.string({ description: "model id (gw tools list shows the catalog models each image tool can take)", required: true }),
  };
  static override enableJsonFlag = true;
  static override flags = {
    default: Flags.boolean({ description: "make MODEL the tool's default even when it has one", default: false }),
    json: jsonFlag,
    ...remoteAdminFlags,
  };

  async run() {
    const { args, flags } = await this.parse(ToolsEnable);
    const admin = remoteAdmin(flags);
    const enabled = admin
      ? await remotely(() => admin.enableTool(args.tool, args.model, flags.default))
      : await enableLocally(args.tool, args.model, flags.default, flags.home);
    const view = { tool: enabled.tool, default: enabled.default, allow: enabled.allow };
    if (enabled.missingProvider !== null) {
      note(
        `note: provider "${enabled.missingProvider}" is not configured, so ${args.model} answers 503 until it is (gw providers add ${enabled.missingProvider} --type ...)`,
      );
    }
    return this.shown(view, () => {
      printLine(`${enabled.added ? "enabled" : "already enabled:"} ${args.model} for ${args.tool}${enabled.default === args.model ? " (the default)" : ""}`);
    });
  }
}

async function enableLocally(tool: string, model: string, makeDefault: boolean, home: string | undefined) {
  const paths = await openHome(home, { create: true });
  const types = await implementedProviderTypes();
  const { result, config } = await editHomeConfig(paths, (raw) => enableTool(raw, tool, model, makeDefault, types));
  const missingProvider = result.provider !== undefined && config.providers[result.provider] === undefined ? result.provider : null;
  return { ...result, missingProvider };
}
