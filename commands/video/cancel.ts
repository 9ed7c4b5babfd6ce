import { Args } from "@oclif/core";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printLine } from "../../src/cli/output.js";
import { jobLines } from "../../src/cli/video-output.js";

export default class VideoCancel extends GwCommand {
  static override description =
    "Cancel a queued or running video job (DELETE /v1/video/jobs/ID); nothing is billed for it. Prints the cancelled job. A job that has already finished cannot be cancelled: the gateway's refusal, non-zero exit.";
  static override examples = ["<%= config.bin %> video cancel vid_01J...", "<%= config.bin %> video cancel vid_01J... --json"];
  static override args = { id: Args.string({ description: "job id (vid_...)", required: true }) };
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run() {
    const { args, flags } = await this.parse(VideoCancel);
    const job = await gatewayClient(flags).video.cancel(args.id);
    return this.shown(job, () => {
      for (const line of jobLines(job)) printLine(line);
    });
  }
}
