import { Args, Flags } from "@oclif/core";
import { CliError } from "../../src/cli/cli-error.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { checkFileSizes, checkLocalFiles, fileSource, type LocalFile } from "../../src/cli/local-files.js";
import { printJson, printLine } from "../../src/cli/output.js";
import { humanBytes, transferProgress } from "../../src/cli/transfer-progress.js";
import { GwApiError } from "../../src/client/gw-api-error.js";

export default class StorageUpload extends GwCommand {
  static override description =
    "Upload files to the agent's storage (POST /v1/storage/upload, or with --presigned a presigned upload and a PUT). Every file is checked first (it exists, can be read, and is within the gateway's per-file limit): when one cannot be sent, none is. Files are streamed from disk; progress shows on a terminal for large files.";
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
    const files = await checkLocalFiles(argv as string[]);
    const client = gatewayClient(flags);
    checkFileSizes(files, (await client.storageLimits()).maxFileBytes);
    // One after another, stopping at the first failure; --json prints each API body in turn.
    const uploaded: LocalFile[] = [];
    for (const file of files) {
      const source = fileSource(file, flags["content-type"], (sizeBytes) => transferProgress(`uploading ${file.path}`, sizeBytes));
      const body = await (flags.presigned ? client.uploadFilePresigned(source) : client.uploadFile(source)).catch((error: unknown) => {
        throw failedUpload(file, uploaded, error);
      });
      uploaded.push(file);
      if (flags.json) printJson(body);
      else printLine(`${body.data.id}  ${body.data.filename}  ${humanBytes(body.data.sizeBytes)}  ${body.data.contentType}`);
    }
  }
}

/** The gateway's refusal, naming the file it was about and what was uploaded before it. */
function failedUpload(file: LocalFile, uploaded: readonly LocalFile[], error: unknown): unknown {
  if (!(error instanceof GwApiError) || error.status === 0) return error;
  const before = uploaded.length > 0 ? `\n(uploaded before it: ${uploaded.map((done) => done.path).join(", ")})` : "";
  return new CliError(`${file.path}: ${error.message}${before}`);
}
