import { Args, Flags } from "@oclif/core";
import { addRoute, type NewRoute } from "../../src/admin/config-edits/routes.js";
import { UsageError } from "../../src/cli/cli-error.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { editHomeConfig } from "../../src/cli/home-config.js";
import { printLine } from "../../src/cli/output.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";
import { parseUpstream } from "../../src/cli/route-entries.js";
import type { RouteConfig } from "../../src/config/config-schema.js";

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
    ...remoteAdminFlags,
  };

  async run() {
    const { args, flags } = await this.parse(RoutesAdd);
    if (flags.provider === undefined && flags.upstream === undefined)
      throw new UsageError("give --provider NAME, or --upstream provider:model[:weight] for a weighted route");
    // The router serves `auto` from weighted routes only: a provider route named auto would never be used.
    if (args.prefix === "auto" && flags.provider !== undefined)
      throw new UsageError("the auto route picks among weighted upstreams: give --upstream provider:model[:weight] instead of --provider");
    const route: NewRoute = { prefix: args.prefix };
    if (flags.provider !== undefined) route.provider = flags.provider;
    if (flags.upstream !== undefined) route.upstreams = flags.upstream.map(parseUpstream);
    if (flags.model !== undefined) route.model = flags.model;
    if (flags.priority !== undefined) route.priority = flags.priority;
    if (flags["free-tier"]) route.freeTier = true;
    const admin = remoteAdmin(flags);
    let added: { index: number; replaced: boolean; route: RouteConfig | undefined };
    if (admin) {
      const answer = await remotely(() => admin.addRoute({ ...route, ...(flags.replace ? { replace: true } : {}) }));
      added = { index: answer.index, replaced: answer.replaced === true, route: answer.route };
    } else {
      const paths = await openHome(flags.home, { create: true });
      const { config, result } = await editHomeConfig(paths, (raw) => addRoute(raw, route, flags.replace));
      added = { ...result, route: config.routes[result.index] };
    }
    return this.shown(added.route, () => {
      printLine(`${added.replaced ? "replaced" : "added"} routes[${added.index}]: "${args.prefix}" -> ${flags.provider ?? (flags.upstream ?? []).join(", ")}`);
    });
  }
}
