import { Flags } from "@oclif/core";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { note, printTable } from "../../src/cli/output.js";
import { humanBytes } from "../../src/cli/transfer-progress.js";

export default class StorageList extends GwCommand {
  // The short verb it had first, kept for scripts: `list`/`remove` are the verbs of every topic.
  static override aliases = ["storage:ls"];
  static override description = "List the agent's stored files, newest first (GET /v1/storage/files).";
  static override examples = ["<%= config.bin %> storage list", "<%= config.bin %> storage list --page 2 --limit 100 --json"];
  static override enableJsonFlag = true;
  static override flags = {
    page: Flags.integer({ description: "page, from 1 [default: 1]" }),
    limit: Flags.integer({ description: "files per page, 1 to 100 [default: 50]" }),
    json: jsonFlag,
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { flags } = await this.parse(StorageList);
    const body = await gatewayClient(flags).listFiles({ page: flags.page, limit: flags.limit });
    return this.shown(body, () => {
      printTable(
        ["ID", "NAME", "SIZE", "TYPE", "CREATED"],
        body.data.map((file) => [file.id, file.filename, humanBytes(file.sizeBytes), file.contentType, file.createdAt]),
        body.pagination.total === 0 ? "no files" : `no files on page ${body.pagination.page}`,
      );
      const { page, limit, total } = body.pagination;
      if (total > 0) note(`page ${page} of ${Math.max(1, Math.ceil(total / limit))}, ${total} file${total === 1 ? "" : "s"} in all`);
    });
  }
}
