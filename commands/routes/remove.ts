import { Args, Flags } from "@oclif/core";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { editHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { arrayAt } from "../../src/cli/raw-config.js";
import { selectRoute } from "../../src/cli/route-entries.js";

export default class RoutesRemove extends GwCommand {
  static override description =
    "Remove the route with this prefix. When several share the prefix, --provider (or for weighted routes such as auto, --priority) picks one; --index picks by the # of `gw routes list`.";
  static override examples = [
    "<%= config.bin %> routes remove groq/",
    "<%= config.bin %> routes remove fast --provider groq",
    "<%= config.bin %> routes remove auto --priority 5",
  ];
  static override args = { prefix: Args.string({ description: "route prefix", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    provider: Flags.string({ description: "the route to this provider (a weighted route: with an upstream to it), when several share the prefix" }),
    priority: Flags.integer({ description: "the route with this priority, when several share the prefix" }),
    index: Flags.integer({ description: "the route at this position (the # of `gw routes list`), when nothing else tells them apart", min: 0 }),
    json: jsonFlag,
  };

  async run() {
    const { args, flags } = await this.parse(RoutesRemove);
    const paths = await openHome(flags.home);
    const { result: removed } = await editHomeConfig(paths, (raw) => {
      const routes = arrayAt(raw, "routes");
      const index = selectRoute(routes, { prefix: args.prefix, provider: flags.provider, priority: flags.priority, index: flags.index }, [
        "provider",
        "priority",
        "index",
      ]);
      return { index, route: routes.splice(index, 1)[0] };
    });
    return this.shown(removed.route, () => {
      printLine(`removed routes[${removed.index}] ("${args.prefix}")`);
    });
  }
}
