import { Args, Flags } from "@oclif/core";
import { batchLines } from "../../src/cli/batch-output.js";
import { followBatch } from "../../src/cli/batch-wait.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printLine } from "../../src/cli/output.js";

export default class BatchStatus extends GwCommand {
  static override description =
    "Show a batch (GET /v1/batches/ID): status, lines done, failed and in all, when it was created, started and ended, its input, output and error files, its metadata, and its input's problems when it failed. With --wait, follow it until it ends, as `gw batch submit --wait` does.";
  static override examples = [
    "<%= config.bin %> batch status batch_01J...",
    "<%= config.bin %> batch status batch_01J... --wait && <%= config.bin %> batch results batch_01J... -o answers.jsonl",
    "<%= config.bin %> batch status batch_01J... --json | jq .request_counts",
  ];
  static override args = { id: Args.string({ description: "batch id (batch_...), as `gw batch submit` printed it", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    wait: Flags.boolean({
      description: "follow the batch until it ends (progress on stderr); exit 0 only when it completed; Ctrl-C stops waiting without cancelling it",
      default: false,
    }),
    json: Flags.boolean({ ...jsonFlag, description: "print the batch as the API answers it (with --wait, as it ended)" }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { args, flags } = await this.parse(BatchStatus);
    const batches = gatewayClient(flags).batches;
    if (flags.wait) return followBatch(batches, args.id, { json: flags.json });
    const batch = await batches.retrieve(args.id);
    return this.shown(batch, () => {
      for (const line of batchLines(batch)) printLine(line);
    });
  }
}
