import { existsSync } from "node:fs";
import { Args, Flags } from "@oclif/core";
import { CliError, UsageError } from "../../src/cli/cli-error.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { localNameFor, saveDownload } from "../../src/cli/local-files.js";
import { note } from "../../src/cli/output.js";
import { humanBytes, transferProgress } from "../../src/cli/transfer-progress.js";

export default class StorageGet extends GwCommand {
  static override description =
    "Download a stored file (GET /v1/storage/files/ID and its signed link), streamed to -o FILE, to stdout with -o -, or by default to its stored name in the current directory (never overwriting).";
  static override examples = ["<%= config.bin %> storage get file_01J... -o report.pdf", "<%= config.bin %> storage get file_01J... -o - | sha256sum"];
  static override args = { id: Args.string({ description: "file id", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    output: Flags.string({ char: "o", description: "where to write the bytes; - is stdout [default: ./<stored filename>]" }),
    json: Flags.boolean({ ...jsonFlag, description: "print {id, filename, contentType, sizeBytes, path} of the saved file as JSON" }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { args, flags } = await this.parse(StorageGet);
    if (flags.json && flags.output === "-") throw new UsageError("--json and -o - both want stdout; choose one");
    const download = await gatewayClient(flags).downloadFile(args.id);
    const target = flags.output ?? localNameFor(download.filename, args.id);
    if (flags.output === undefined && existsSync(target)) {
      await download.body.cancel();
      throw new CliError(`${target} already exists; pass -o FILE to choose where to save it`);
    }
    const bytes = await saveDownload(download.body, target, transferProgress(`downloading ${args.id}`, download.sizeBytes));
    return this.shown({ id: args.id, filename: download.filename ?? null, contentType: download.contentType, sizeBytes: bytes, path: target }, () => {
      if (target !== "-") note(`saved ${target} (${humanBytes(bytes)})`);
    });
  }
}
