import { Args } from "@oclif/core";
import { CliError } from "../../src/cli/cli-error.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { editHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { providerView, routesUsing } from "../../src/cli/provider-entries.js";
import { arrayAt, objectAt } from "../../src/cli/raw-config.js";

export default class ProvidersRemove extends GwCommand {
  static override description = "Remove a provider from config.json; refused while a route sends traffic to it.";
  static override args = { name: Args.string({ description: "provider name", required: true }) };
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag };

  async run() {
    const { args, flags } = await this.parse(ProvidersRemove);
    const paths = await openHome(flags.home);
    const { result: removed } = await editHomeConfig(paths, (raw) => {
      const providers = objectAt(raw, "providers");
      if (providers[args.name] === undefined) throw new CliError(`no provider "${args.name}"`);
      const users = routesUsing(arrayAt(raw, "routes"), args.name);
      if (users.length > 0) {
        const named = users.map((user) => `routes[${user.index}] (prefix "${user.prefix}")`).join(", ");
        throw new CliError(
          `provider "${args.name}" is used by ${named}; remove or change ${users.length > 1 ? "those routes" : "that route"} first (\`gw routes remove PREFIX\`)`,
        );
      }
      const entry = providers[args.name];
      delete providers[args.name];
      return providerView(args.name, entry);
    });
    return this.shown(removed, () => {
      printLine(`removed provider "${args.name}"`);
    });
  }
}
