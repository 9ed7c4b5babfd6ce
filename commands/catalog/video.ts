import { fitColumns, terminalWidth } from "../../src/cli/audio-output.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printLine, printTable } from "../../src/cli/output.js";
import { CATALOG_HEADERS, catalogRows } from "../../src/cli/video-output.js";

export default class CatalogVideo extends GwCommand {
  static override description =
    "List the video models this gateway offers (GET /v1/public/video-models; no key needed): whether each takes a reference photo (none, optional or required), clip lengths in seconds, resolutions, aspect ratios (* marks the defaults) and the price per second of finished clip in dollars.";
  static override examples = ["<%= config.bin %> catalog video", "<%= config.bin %> catalog video --json | jq '.models[].constraints.sizes'"];
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run() {
    const { flags } = await this.parse(CatalogVideo);
    const body = await gatewayClient(flags, process.env, { keyRequired: false }).video.videoCatalog();
    return this.shown(body, () => {
      const rows = catalogRows(body.models);
      // On a narrow terminal the ratios give up room first, then the resolutions, then the prices (--json has everything).
      printTable(
        CATALOG_HEADERS,
        fitColumns(CATALOG_HEADERS, rows, terminalWidth(), [4, 3, 5]),
        "no video models: configure a video provider and allowlist it in tools.video",
      );
      if (body.models.length > 0) printLine("* the default");
    });
  }
}
