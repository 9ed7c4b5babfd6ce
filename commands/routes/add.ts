import { Args, Flags } from "@oclif/core";
import { CliError, UsageError } from "../../src/cli/cli-error.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { editHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { arrayAt } from "../../src/cli/raw-config.js";
import { duplicateRoute, duplicateRouteMessage, parseUpstream } from "../../src/cli/route-entries.js";

export default class RoutesAdd extends GwCommand {
  static override description =
    "Add a chat route: requests whose model starts with PREFIX go to a provider (highest priority, then longest prefix, wins). `auto` takes weighted --upstream entries. A route with the same prefix and provider (for `auto`, any `auto` route) is refused unless --replace is given; `gw routes set` changes one in place.";
  static override examples = [
    "<%= config.bin %> routes add groq/ --provider groq --priority 10 --free-tier",
    "<%= config.bin %> routes add fast --provider groq --model llama-3.1-8b-instant",
    "<%= config.bin %> routes add auto --replace --upstream openai:gpt-4o-mini:3 --upstream groq:llama-3.1-8b-instant:1",
  ];
  static override args = { prefix: Args.string({ description: "model prefix (e.g. openai/), a short alias, or auto", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    provider: Flags.string({ description: "provider that serves the route", exclusive: ["upstream"] }),
    upstream: Flags.string({ description: "weighted upstream provider:model[:weight] (repeatable)", multiple: true, exclusive: ["provider", "model"] }),
    model: Flags.string({ description: "send this model upstream instead of the request's model minus the prefix" }),
    priority: Flags.integer({ description: "higher wins among matching routes [default: 0]" }),
    "free-tier": Flags.boolean({ description: "reachable by free-tier plans", default: false }),
    replace: Flags.boolean({ description: "replace the route with this prefix and provider (for auto: the auto route) instead of refusing", default: false }),
    json: jsonFlag,
  };

  async run() {
    const { args, flags } = await this.parse(RoutesAdd);
    if (flags.provider === undefined && flags.upstream === undefined)
      throw new UsageError("give --provider NAME, or --upstream provider:model[:weight] for a weighted route");
    // The router serves `auto` from weighted routes only: a provider route named auto would never be used.
    if (args.prefix === "auto" && flags.provider !== undefined)
      throw new UsageError("the auto route picks among weighted upstreams: give --upstream provider:model[:weight] instead of --provider");
    const route: Record<string, unknown> = { prefix: args.prefix };
    if (flags.provider !== undefined) route.provider = flags.provider;
    if (flags.upstream !== undefined) route.upstreams = flags.upstream.map(parseUpstream);
    if (flags.model !== undefined) route.model = flags.model;
    if (flags.priority !== undefined) route.priority = flags.priority;
    if (flags["free-tier"]) route.freeTier = true;
    const paths = await openHome(flags.home, { create: true });
    const { config, result } = await editHomeConfig(paths, (raw) => {
      const routes = arrayAt(raw, "routes");
      const duplicate = duplicateRoute(routes, { prefix: args.prefix, provider: flags.provider });
      if (duplicate < 0) return { index: routes.push(route) - 1, replaced: false };
      if (!flags.replace) throw new CliError(duplicateRouteMessage(routes, duplicate, args.prefix));
      routes[duplicate] = route;
      return { index: duplicate, replaced: true };
    });
    return this.shown(config.routes[result.index], () => {
      printLine(
        `${result.replaced ? "replaced" : "added"} routes[${result.index}]: "${args.prefix}" -> ${flags.provider ?? (flags.upstream ?? []).join(", ")}`,
      );
    });
  }
}
