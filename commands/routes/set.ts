import { Args, Flags } from "@oclif/core";
import { arrayAt } from "../../src/admin/config-edits/raw-config.js";
import { changeRoute, type RouteChanges } from "../../src/admin/config-edits/routes.js";
import { UsageError } from "../../src/cli/cli-error.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { editHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";
import { type RouteSelector, routeTarget, selectRoute } from "../../src/cli/route-entries.js";
import type { RouteConfig } from "../../src/config/config-schema.js";

export default class RoutesSet extends GwCommand {
  static override description =
    "Change a route in place: only what is given changes. When several routes share the prefix, --provider (or --index, the # of `gw routes list`) picks which. A running server follows the change without a restart. To send a route to another provider, or change auto's upstreams, use `gw routes add ... --replace`.";
  static override examples = [
    "<%= config.bin %> routes set openai/ --priority 20 --free-tier",
    "<%= config.bin %> routes set fast --provider groq --model llama-3.3-70b-versatile",
    "<%= config.bin %> routes set auto --no-free-tier",
    "<%= config.bin %> routes set pinned --model ''          # send the request's model again",
  ];
  static override args = { prefix: Args.string({ description: "route prefix", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    provider: Flags.string({ description: "the route to this provider (a weighted route: with an upstream to it), when several share the prefix" }),
    index: Flags.integer({ description: "the route at this position (the # of `gw routes list`), when --provider does not tell them apart", min: 0 }),
    priority: Flags.integer({ description: "new priority (higher wins among matching routes)" }),
    "free-tier": Flags.boolean({ description: "reachable by free-tier plans (--no-free-tier: not)", allowNo: true }),
    model: Flags.string({ description: "send this model upstream instead of the request's model minus the prefix; '' stops doing so" }),
    json: jsonFlag,
    ...remoteAdminFlags,
  };

  async run() {
    const { args, flags } = await this.parse(RoutesSet);
    if (flags.priority === undefined && flags["free-tier"] === undefined && flags.model === undefined) {
      throw new UsageError("nothing to change: give --priority N, --free-tier or --no-free-tier, or --model M");
    }
    const selector: RouteSelector = { prefix: args.prefix, provider: flags.provider, index: flags.index };
    const changes: RouteChanges = { priority: flags.priority, freeTier: flags["free-tier"], model: flags.model };
    const admin = remoteAdmin(flags);
    let changed: { index: number; route: RouteConfig };
    if (admin) {
      // Picked from the gateway's listing; the change names the prefix seen there, so a route that moved meanwhile is refused, not another changed.
      const index = selectRoute(await remotely(() => admin.routes()), selector, ["provider", "index"]);
      const body = {
        priority: changes.priority,
        freeTier: changes.freeTier,
        ...(changes.model === undefined ? {} : { model: changes.model === "" ? null : changes.model }),
      };
      changed = await remotely(() => admin.updateRoute(index, args.prefix, body));
    } else {
      const paths = await openHome(flags.home);
      const { config, result: index } = await editHomeConfig(paths, (raw) => {
        const found = selectRoute(arrayAt(raw, "routes"), selector, ["provider", "index"]);
        changeRoute(raw, found, changes);
        return found;
      });
      changed = { index, route: config.routes[index]! };
    }
    const { index, route } = changed;
    return this.shown(route, () => {
      const model = route.model === undefined ? "" : `, model ${route.model}`;
      printLine(
        `changed routes[${index}]: "${route.prefix}" -> ${routeTarget(route)} (priority ${route.priority}, free tier ${route.freeTier ? "yes" : "no"}${model})`,
      );
    });
  }
}
