import { Args, Flags } from "@oclif/core";
import { GwCommand } from "../../src/cli/gw-command.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { fileSource } from "../../src/cli/local-files.js";
import { printJson, printLine } from "../../src/cli/output.js";
import { humanBytes, transferProgress } from "../../src/cli/transfer-progress.js";

export default class StorageUpload extends GwCommand {
  static override description =
    "Upload files to the agent's storage (POST /v1/storage/upload, or with --presigned a presigned upload and a PUT). Files are streamed from disk; progress shows on a terminal for large files.";
  static override examples = [
    "<%= config.bin %> storage upload report.pdf",
    "<%= config.bin %> storage upload *.png --presigned",
    "<%= config.bin %> storage upload data.bin --content-type application/x-ndjson --json | jq -r .data.id",
  ];
  static override strict = false;
  static override args = { file: Args.string({ description: "file to upload (several may be given)", required: true }) };
  static override flags = {
    presigned: Flags.boolean({ description: "ask for a presigned upload link, then PUT the bytes to it", default: false }),
    "content-type": Flags.string({ description: "Content-Type to store [default: by file extension, else application/octet-stream]" }),
    json: jsonFlag,
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(StorageUpload);
    const client = gatewayClient(flags);
    // One after another, stopping at the first failure; --json prints each API body in turn.
    for (const file of argv as string[]) {
      const source = await fileSource(file, flags["content-type"], (sizeBytes) => transferProgress(`uploading ${file}`, sizeBytes));
      const body = flags.presigned ? await client.uploadFilePresigned(source) : await client.uploadFile(source);
      if (flags.json) printJson(body);
      else printLine(`${body.data.id}  ${body.data.filename}  ${humanBytes(body.data.sizeBytes)}  ${body.data.contentType}`);
    }
  }
}
