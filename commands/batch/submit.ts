import { Args, Flags } from "@oclif/core";
import { PROMPTS_ENDPOINT } from "../../src/cli/batch-prompts.js";
import { jsonlInput, metadataOf, promptsInput, submitBatch } from "../../src/cli/batch-submit.js";
import { endedError, followBatch } from "../../src/cli/batch-wait.js";
import { UsageError } from "../../src/cli/cli-error.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag, numberFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { note, printJson, printLine } from "../../src/cli/output.js";
import type { UploadSource } from "../../src/client/storage-types.js";

const PROMPT_FLAGS = ["model", "system", "max-tokens", "temperature"] as const;

export default class BatchSubmit extends GwCommand {
  static override description =
    "Run many requests as one batch (OpenAI's Batch API: POST /v1/files, then POST /v1/batches). FILE holds one request a line, {custom_id, method: POST, url, body}; or give --prompts FILE and --model, one prompt a non-empty line, and gw writes those lines for you (custom_id line-<n>, n the prompt's line). Prints the batch id; the lines run in the background at the gateway. With --wait it follows the batch (a live line on a terminal), prints its final line and exits 0 when it completed, non-zero when it failed, expired or was cancelled. An input with problems fails the batch at once, costing nothing: each problem is listed with its line, non-zero exit.";
  static override examples = [
    "<%= config.bin %> batch submit requests.jsonl",
    "<%= config.bin %> batch submit --model openai/gpt-4o-mini --prompts prompts.txt --wait",
    "cat requests.jsonl | <%= config.bin %> batch submit - --endpoint /v1/embeddings --metadata job=nightly --json | jq -r .id",
  ];
  static override args = {
    // ignoreStdin: oclif would otherwise take a missing argument from piped stdin.
    file: Args.string({ description: "the JSONL input, one request a line; - reads it from stdin", ignoreStdin: true }),
  };
  static override enableJsonFlag = true;
  static override flags = {
    endpoint: Flags.string({
      description: `what every line calls: /v1/chat/completions, /v1/responses, /v1/embeddings or /v1/messages [default: ${PROMPTS_ENDPOINT}]`,
    }),
    metadata: Flags.string({ description: "key=value kept with the batch (repeat for more; at most 16)", multiple: true }),
    prompts: Flags.string({ description: "instead of FILE: a text file of prompts, one a non-empty line (- reads stdin); needs --model" }),
    model: Flags.string({ description: "with --prompts: the chat model every prompt goes to" }),
    system: Flags.string({ description: "with --prompts: a system message before every prompt" }),
    "max-tokens": Flags.integer({ description: "with --prompts: max_tokens of every request", min: 1 }),
    temperature: numberFlag({ description: "with --prompts: temperature of every request" }),
    wait: Flags.boolean({
      description: "follow the batch until it ends (progress on stderr); exit 0 only when it completed; Ctrl-C stops waiting without cancelling it",
      default: false,
    }),
    json: Flags.boolean({ ...jsonFlag, description: "print the batch as the API answers it (with --wait, as it ended)" }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { args, flags } = await this.parse(BatchSubmit);
    if (args.file !== undefined && flags.prompts !== undefined) throw new UsageError("give FILE or --prompts, not both");
    const metadata = metadataOf(flags.metadata);
    const client = gatewayClient(flags);
    let source: UploadSource;
    if (flags.prompts !== undefined) {
      if (flags.model === undefined) throw new UsageError("--prompts needs --model: the chat model every prompt goes to");
      if (flags.endpoint !== undefined && flags.endpoint !== PROMPTS_ENDPOINT)
        throw new UsageError(`--prompts writes ${PROMPTS_ENDPOINT} requests; drop --endpoint`);
      const settings = { model: flags.model, system: flags.system, maxTokens: flags["max-tokens"], temperature: flags.temperature };
      source = await promptsInput(flags.prompts, settings);
    } else {
      if (args.file === undefined) throw new UsageError("give the JSONL FILE (- for stdin), or --prompts FILE with --model; see gw batch submit --help");
      const given = PROMPT_FLAGS.filter((name) => flags[name] !== undefined);
      if (given.length > 0) throw new UsageError(`${given.map((name) => `--${name}`).join(", ")} ${given.length > 1 ? "go" : "goes"} with --prompts`);
      source = await jsonlInput(args.file, client);
    }
    const batches = client.batches;
    const batch = await submitBatch(batches, source, { endpoint: flags.endpoint ?? PROMPTS_ENDPOINT, metadata });
    if (batch.status === "failed") {
      if (flags.json) printJson(batch);
      throw endedError(batch);
    }
    if (!flags.json) printLine(batch.id);
    if (flags.wait) return followBatch(batches, batch.id, { json: flags.json }, batch);
    return this.shown(batch, () => note(`${batch.request_counts.total} lines, ${batch.status}; follow it with \`gw batch status ${batch.id} --wait\``));
  }
}
