import { Args, Flags } from "@oclif/core";
import { editConfig } from "../../src/config/config-file.js";
import { CliError } from "../../src/cli/cli-error.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { openHome } from "../../src/cli/home.js";
import { printJson, printLine } from "../../src/cli/output.js";
import { routesUsing } from "../../src/cli/provider-entries.js";
import { arrayAt, stringField } from "../../src/cli/raw-config.js";

export default class RoutesRemove extends GwCommand {
  static override description = "Remove the route with this prefix (--provider picks one when several share the prefix).";
  static override args = { prefix: Args.string({ description: "route prefix", required: true }) };
  static override flags = {
    provider: Flags.string({ description: "the route to this provider, when several routes share the prefix" }),
    json: jsonFlag,
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(RoutesRemove);
    const paths = await openHome(flags.home);
    const { result: removed } = await editConfig(paths.config, (raw) => {
      const routes = arrayAt(raw, "routes");
      let matches = routes.flatMap((route, index) => (stringField(route, "prefix") === args.prefix ? [index] : []));
      if (flags.provider !== undefined) {
        const using = new Set(routesUsing(routes, flags.provider).map((user) => user.index));
        matches = matches.filter((index) => using.has(index));
      }
      const what = `prefix "${args.prefix}"${flags.provider === undefined ? "" : ` and provider "${flags.provider}"`}`;
      if (matches.length === 0) throw new CliError(`no route with ${what}`);
      if (matches.length > 1) throw new CliError(`${matches.length} routes have ${what} (${matches.map((index) => `routes[${index}]`).join(", ")}); pick one with --provider`);
      const index = matches[0] ?? 0;
      return { index, route: routes.splice(index, 1)[0] };
    });
    if (flags.json) return printJson(removed.route);
    printLine(`removed routes[${removed.index}] ("${args.prefix}")`);
  }
}
