import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { loadHomeConfig } from "../../src/cli/home-config.js";
import { printTable } from "../../src/cli/output.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";
import { routeTarget } from "../../src/cli/route-entries.js";

export default class RoutesList extends GwCommand {
  static override description = "List chat routes in config order.";
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, ...remoteAdminFlags };

  async run() {
    const { flags } = await this.parse(RoutesList);
    const admin = remoteAdmin(flags);
    const routes = admin ? await remotely(() => admin.routes()) : (await loadHomeConfig(await openHome(flags.home))).routes;
    return this.shown(routes, () => {
      printTable(
        ["#", "PREFIX", "PROVIDER / UPSTREAMS", "MODEL", "PRIORITY", "FREE TIER"],
        routes.map((route, index) => [index, route.prefix, routeTarget(route), route.model, route.priority, route.freeTier]),
        "no routes (add one with `gw routes add PREFIX --provider NAME`)",
      );
    });
  }
}
