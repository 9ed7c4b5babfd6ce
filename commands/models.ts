import { GwCommand } from "../src/cli/gw-command.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../src/cli/flags.js";
import { gatewayClient } from "../src/cli/gateway-client.js";
import { printJson, printTable } from "../src/cli/output.js";

export default class Models extends GwCommand {
  static override description = "List the gateway's chat models (GET /v1/models).";
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run(): Promise<void> {
    const { flags } = await this.parse(Models);
    const body = await gatewayClient(flags).listModels();
    if (flags.json) return printJson(body);
    printTable(
      ["ID", "NAME", "CONTEXT", "MODALITIES"],
      body.data.map((model) => [
        model.id,
        model.name,
        model.context_length,
        model.architecture ? `${model.architecture.input_modalities.join(",")} -> ${model.architecture.output_modalities.join(",")}` : undefined,
      ]),
      "no models",
    );
  }
}
