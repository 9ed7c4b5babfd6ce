import { Args } from "@oclif/core";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { note, printLine } from "../../src/cli/output.js";

export default class ProjectsCreate extends GwCommand {
  static override description = "Create a project for your pictures (POST /v1/projects); prints its id.";
  static override examples = ['<%= config.bin %> projects create "Spring posters"', "<%= config.bin %> projects create Logos --json"];
  static override args = { name: Args.string({ description: "project name (1 to 100 characters)", required: true }) };
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run() {
    const { args, flags } = await this.parse(ProjectsCreate);
    const project = await gatewayClient(flags).createProject(args.name);
    return this.shown(project, () => {
      printLine(project.project_id);
      note(`created project "${project.name}"`);
    });
  }
}
