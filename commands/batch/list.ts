import { Flags } from "@oclif/core";
import { fitColumns, terminalWidth } from "../../src/cli/audio-output.js";
import { BATCH_TABLE_HEADERS, batchRows } from "../../src/cli/batch-output.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printTable } from "../../src/cli/output.js";

export default class BatchList extends GwCommand {
  // `list` is every topic's verb (docs/decisions.md §17); `ls` is the short spelling.
  static override aliases = ["batch:ls"];
  static override description =
    "List your batches, newest first (GET /v1/batches): id, status, lines done, failed and in all, how long ago each was created, and the endpoint its lines call.";
  static override examples = [
    "<%= config.bin %> batch list",
    "<%= config.bin %> batch list --limit 50 --json | jq -r '.data[] | select(.status == \"completed\") | .id'",
  ];
  static override enableJsonFlag = true;
  static override flags = {
    limit: Flags.integer({ description: "how many batches, 1 to 100 [default: 20]", min: 1, max: 100 }),
    json: Flags.boolean({ ...jsonFlag, description: "print the API body ({object: list, data: [batches], first_id, last_id, has_more})" }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { flags } = await this.parse(BatchList);
    const body = await gatewayClient(flags).batches.list({ limit: flags.limit });
    return this.shown(body, () => {
      // The endpoint gives up room first; the id, which the other commands take, is never cut.
      printTable(
        BATCH_TABLE_HEADERS,
        fitColumns(BATCH_TABLE_HEADERS, batchRows(body.data), terminalWidth(), [6]),
        "no batches yet (start one with `gw batch submit`)",
      );
    });
  }
}
