import { Args, Flags } from "@oclif/core";
import { resultsFileOf } from "../../src/cli/batch-results.js";
import { UsageError } from "../../src/cli/cli-error.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { saveDownload } from "../../src/cli/local-files.js";
import { note } from "../../src/cli/output.js";
import { humanBytes, transferProgress } from "../../src/cli/transfer-progress.js";

export default class BatchResults extends GwCommand {
  static override description =
    "The answers of a batch that has ended: its output file (GET /v1/files/ID/content), one JSON line per answered request ({id, custom_id, response: {status_code, request_id, body}, error: null}), in the input's order; with --errors its error file, the lines that failed. Written to stdout, or to -o FILE (replaced only once complete). A batch still running, or one without such a file, is said and exits non-zero.";
  static override examples = [
    "<%= config.bin %> batch results batch_01J... | jq -r '.response.body.choices[0].message.content'",
    "<%= config.bin %> batch results batch_01J... -o answers.jsonl",
    "<%= config.bin %> batch results batch_01J... --errors -o failed.jsonl",
  ];
  static override args = { id: Args.string({ description: "batch id (batch_...)", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    errors: Flags.boolean({ description: "the error file (the lines that failed) instead of the answers", default: false }),
    output: Flags.string({ char: "o", description: "write to FILE (via a temporary file, renamed when complete); - is stdout [default: stdout]" }),
    json: Flags.boolean({ ...jsonFlag, description: "with -o FILE: print {id, file_id, kind, path, bytes} of the saved file" }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { args, flags } = await this.parse(BatchResults);
    const target = flags.output ?? "-";
    if (flags.json && target === "-") throw new UsageError("--json and the results both want stdout; pass -o FILE with --json");
    const batches = gatewayClient(flags).batches;
    const kind = flags.errors ? "errors" : "output";
    const fileId = resultsFileOf(await batches.retrieve(args.id), kind);
    const content = await batches.fileContent(fileId);
    const bytes = await saveDownload(content.body, target, transferProgress(`downloading ${fileId}`, content.sizeBytes));
    return this.shown({ id: args.id, file_id: fileId, kind, path: target === "-" ? null : target, bytes }, () => {
      if (target !== "-") note(`saved ${target} (${humanBytes(bytes)})`);
    });
  }
}
