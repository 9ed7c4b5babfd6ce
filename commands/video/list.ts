import { Flags } from "@oclif/core";
import { fitColumns, terminalWidth } from "../../src/cli/audio-output.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printTable } from "../../src/cli/output.js";
import { JOB_TABLE_HEADERS, jobRows } from "../../src/cli/video-output.js";

export default class VideoList extends GwCommand {
  // The short verb it had first, kept for scripts: `list`/`remove` are the verbs of every topic.
  static override aliases = ["video:ls"];
  static override description =
    "List your recent video jobs, newest first (GET /v1/video/jobs): id, status (with progress while running), model, and how long ago each was queued and finished.";
  static override examples = [
    "<%= config.bin %> video list",
    "<%= config.bin %> video list --limit 50 --json | jq -r '.data[] | select(.status == \"SUCCEEDED\") | .id'",
  ];
  static override enableJsonFlag = true;
  static override flags = {
    limit: Flags.integer({ description: "how many jobs, 1 to 100 [default: 20]", min: 1, max: 100 }),
    json: Flags.boolean({ ...jsonFlag, description: "print the API body ({data: [jobs]})" }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { flags } = await this.parse(VideoList);
    const body = await gatewayClient(flags).video.list({ limit: flags.limit });
    return this.shown(body, () => {
      // The model gives up room first; the id, which the other commands take, is never cut.
      printTable(
        JOB_TABLE_HEADERS,
        fitColumns(JOB_TABLE_HEADERS, jobRows(body.data), terminalWidth(), [2]),
        "no video jobs yet (start one with `gw video generate`)",
      );
    });
  }
}
