import { Args, Flags } from "@oclif/core";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printLine } from "../../src/cli/output.js";
import { jobLines } from "../../src/cli/video-output.js";
import { checkWaitFlags, followJob, videoWaitFlags } from "../../src/cli/video-wait.js";

export default class VideoStatus extends GwCommand {
  static override description =
    "Show a video job (GET /v1/video/jobs/ID): status, model, when it was queued, started and finished, its clip's link and when that expires, or its error. With --wait, poll until it ends and save the clip as `gw video generate --wait` does (a finished job's clip is saved at once).";
  static override examples = [
    "<%= config.bin %> video status vid_01J...",
    "<%= config.bin %> video status vid_01J... --wait -o clip.mp4",
    "<%= config.bin %> video status vid_01J... --json | jq -r .resultUrl",
  ];
  static override args = { id: Args.string({ description: "job id (vid_...), as `gw video generate` printed it", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    ...videoWaitFlags,
    json: Flags.boolean({
      ...jsonFlag,
      description: "print the job as the API answers it; with --wait the finished job, plus `file`, the path the clip was saved to",
    }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { args, flags } = await this.parse(VideoStatus);
    await checkWaitFlags(flags);
    const client = gatewayClient(flags);
    if (flags.wait) return followJob(client, args.id, flags);
    const job = await client.video.job(args.id);
    return this.shown(job, () => {
      for (const line of jobLines(job)) printLine(line);
    });
  }
}
