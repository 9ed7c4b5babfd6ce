import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printTable } from "../../src/cli/output.js";

export default class ProjectsList extends GwCommand {
  static override description = "List your projects, the default one first (GET /v1/projects).";
  static override examples = ["<%= config.bin %> projects list", "<%= config.bin %> projects list --json"];
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run() {
    const { flags } = await this.parse(ProjectsList);
    const body = await gatewayClient(flags).listProjects();
    return this.shown(body, () => {
      printTable(
        ["ID", "NAME", "DEFAULT", "CREATED"],
        body.data.map((project) => [project.project_id, project.name, project.isDefault, project.createdAt]),
        "no projects",
      );
    });
  }
}
