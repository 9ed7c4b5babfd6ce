import { Args, Flags } from "@oclif/core";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { note, printLine } from "../../src/cli/output.js";
import { textArgument } from "../../src/cli/stdin.js";
import { referenceImageUrl } from "../../src/cli/video-input.js";
import { checkWaitFlags, followJob, videoWaitFlags } from "../../src/cli/video-wait.js";
import type { VideoGenerationRequest } from "../../src/client/video-types.js";

export default class VideoGenerate extends GwCommand {
  static override description =
    "Start a video clip (POST /v1/video/generations). Generation is an asynchronous job: without --wait the job id is printed as soon as it is queued (follow it with `gw video status ID --wait`); with --wait the command polls until the job ends (status on stderr), saves the clip to -o FILE, to stdout with -o -, or by default to video-<job id>.mp4 in the current directory, and prints the path. A failed or cancelled job exits non-zero with its error. What each model takes (reference photo, lengths, resolutions, ratios) and costs: `gw catalog video`.";
  static override examples = [
    '<%= config.bin %> video generate "a slow push in on the lighthouse" --image photo.jpg --duration 5 --wait -o lighthouse.mp4',
    '<%= config.bin %> video generate "waves at dusk" --model runway/gen4.5 --resolution 720p --ratio 9:16',
    '<%= config.bin %> video generate "a cat yawns" --image https://example.com/cat.png --wait -o - | ffplay -autoexit -',
    'echo "a paper boat on a pond" | <%= config.bin %> video generate - --image boat.png --json | jq -r .id',
  ];
  static override args = {
    // ignoreStdin: oclif would otherwise take a missing argument from piped stdin.
    prompt: Args.string({ description: "what the clip should show; - reads it from stdin", required: true, ignoreStdin: true }),
  };
  static override enableJsonFlag = true;
  static override flags = {
    image: Flags.string({
      description: "the reference photo: a local FILE (PNG, JPEG, WebP or GIF, sent inline) or an http(s) or data: URL; required or refused per model",
    }),
    duration: Flags.integer({ description: "length of the clip in seconds (range per model: gw catalog video) [default: the model's]", min: 1 }),
    resolution: Flags.string({ description: "e.g. 480p, 720p, 1080p (per model) [default: the model's]" }),
    ratio: Flags.string({ description: "aspect ratio W:H, e.g. 16:9, 9:16, 1:1 (per model and resolution) [default: the model's]" }),
    model: Flags.string({ description: "video model id, allowlisted in tools.video [default: the gateway's default]" }),
    project: Flags.string({ description: "project id from `gw projects list`, for the clip kept in your storage [default: your default project]" }),
    ...videoWaitFlags,
    json: Flags.boolean({
      ...jsonFlag,
      description: "print the queued job as the API answers it (202 body); with --wait the finished job, plus `file`, the path the clip was saved to",
    }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { args, flags } = await this.parse(VideoGenerate);
    await checkWaitFlags(flags);
    const client = gatewayClient(flags);
    const body: VideoGenerationRequest = { prompt: await textArgument(args.prompt, "prompt") };
    if (flags.image !== undefined) body.image_url = await referenceImageUrl(flags.image);
    if (flags.duration !== undefined) body.duration_seconds = flags.duration;
    if (flags.resolution !== undefined) body.resolution = flags.resolution;
    if (flags.ratio !== undefined) body.ratio = flags.ratio;
    if (flags.model !== undefined) body.model = flags.model;
    if (flags.project !== undefined) body.project_id = flags.project;
    const job = await client.video.generate(body);
    if (flags.wait) return followJob(client, job.id, flags, job);
    return this.shown(job, () => {
      printLine(job.id);
      note(`queued on ${job.model}; wait for it with \`gw video status ${job.id} --wait\``);
    });
  }
}
