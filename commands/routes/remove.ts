import { Args, Flags } from "@oclif/core";
import { arrayAt } from "../../src/admin/config-edits/raw-config.js";
import { removeRoute } from "../../src/admin/config-edits/routes.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { editHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";
import { type RouteSelector, selectRoute } from "../../src/cli/route-entries.js";
import { type RouteConfig, routeSchema } from "../../src/config/config-schema.js";

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
    ...remoteAdminFlags,
  };

  async run() {
    const { args, flags } = await this.parse(RoutesRemove);
    const selector: RouteSelector = { prefix: args.prefix, provider: flags.provider, priority: flags.priority, index: flags.index };
    const admin = remoteAdmin(flags);
    let removed: { index: number; route: RouteConfig };
    if (admin) {
      // Picked from the gateway's listing; the removal names the prefix seen there, so a route that moved meanwhile is refused, not another removed.
      const index = selectRoute(await remotely(() => admin.routes()), selector, ["provider", "priority", "index"]);
      removed = await remotely(() => admin.removeRoute(index, args.prefix));
    } else {
      const paths = await openHome(flags.home);
      const { result } = await editHomeConfig(paths, (raw) => {
        const index = selectRoute(arrayAt(raw, "routes"), selector, ["provider", "priority", "index"]);
        return { index, route: removeRoute(raw, index) };
      });
      // As `gw routes list` showed it: the config's defaults filled in.
      removed = { index: result.index, route: routeSchema.parse(result.route) };
    }
    return this.shown(removed.route, () => {
      printLine(`removed routes[${removed.index}] ("${args.prefix}")`);
    });
  }
}
