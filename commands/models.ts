import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../src/cli/flags.js";
import { GwCommand } from "../src/cli/gw-command.js";
import { modelsList } from "../src/cli/models-list.js";

// The work is in src/cli/models-list.ts, shared with the start-up fast path (src/cli/fast-path.ts):
// a flag added here goes in its table there too (test/cli-fast-path.test.ts checks).
export default class Models extends GwCommand {
  static override description =
    "List what your key can call (GET /v1/models): the models routes serve, with their price per million input/output tokens; `auto` when your key may use it; and `PREFIX*` for a route that passes any model id after its prefix to its provider (no models entry describes them; `gw models add` writes one). Against the home's own server, `default $1/$3` marks models billed at billing.defaultChatPricing for lack of a price of their own.";
  static override examples = ["<%= config.bin %> models", "<%= config.bin %> models --json | jq -r '.data[].id'"];
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run() {
    const { flags } = await this.parse(Models);
    const { result, view } = await modelsList(flags);
    return this.shown(result, view);
  }
}
