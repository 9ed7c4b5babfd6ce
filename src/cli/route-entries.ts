// Routes on the command line: `--upstream` flags, how a route is shown, and one route among
// several sharing a prefix named by provider, priority or position, in the home's config or in a
// remote gateway's listing. The changes themselves are src/admin/config-edits/routes.ts's, which
// the admin API shares.
import { isRecord, stringField } from "../admin/config-edits/raw-config.js";
import { isWeighted, rawRouteTarget, type UpstreamSpec } from "../admin/config-edits/routes.js";
import type { RouteConfig } from "../config/config-schema.js";
import { CliError, UsageError } from "./cli-error.js";

/**
 * `provider:model[:weight]`. Model ids may contain colons (`llama3:8b`), so only a last segment
 * that is a plain number is read as the weight.
 */
export function parseUpstream(value: string): UpstreamSpec {
  const separator = value.indexOf(":");
  const provider = separator > 0 ? value.slice(0, separator) : "";
  let model = separator > 0 ? value.slice(separator + 1) : "";
  let weight: number | undefined;
  const last = model.lastIndexOf(":");
  if (last > 0 && /^\d+(\.\d+)?$/.test(model.slice(last + 1))) {
    weight = Number(model.slice(last + 1));
    model = model.slice(0, last);
  }
  if (!provider || !model) throw new UsageError(`--upstream "${value}": expected provider:model[:weight]`);
  return weight === undefined ? { provider, model } : { provider, model, weight };
}

export function routeTarget(route: RouteConfig): string {
  if (route.upstreams) return route.upstreams.map((upstream) => `${upstream.provider}:${upstream.model}:${upstream.weight}`).join(", ");
  return route.provider ?? "";
}

/** How `gw routes remove` and `gw routes set` name one route among those sharing a prefix. */
export interface RouteSelector {
  prefix: string;
  /** The route to this provider (or, for a weighted route, with an upstream to it). */
  provider?: string;
  priority?: number;
  /** Its position, the # of `gw routes list`. */
  index?: number;
}

/** Which selector flags the command offers besides the prefix (`set` changes --priority). */
export type SelectorFlag = "provider" | "priority" | "index";

/**
 * The index of the one route the selector names, in a config edit or among a gateway's listed routes. None, or several, is refused;
 * several are listed, each with a flag that picks it.
 */
export function selectRoute(routes: readonly unknown[], selector: RouteSelector, flags: readonly SelectorFlag[]): number {
  const matches = routes.flatMap((route, index) => (routeMatches(route, index, selector) ? [index] : []));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) throw new CliError(`no route with ${describeSelector(selector)} (\`gw routes list\` shows the routes)`);
  const weighted = matches.some((index) => isWeighted(routes[index]));
  const offered = flags.filter((flag) => flag !== "priority" || weighted);
  const lines = matches.map(
    (index) =>
      `  routes[${index}] -> ${rawRouteTarget(routes[index])} (priority ${priorityOf(routes[index])}): ${pickingFlag(routes, matches, index, offered)}`,
  );
  throw new CliError(`${matches.length} routes have ${describeSelector(selector)}; pick one with ${offered.map(flagUsage).join(", ")}:\n${lines.join("\n")}`);
}

function routeMatches(route: unknown, index: number, selector: RouteSelector): boolean {
  if (stringField(route, "prefix") !== selector.prefix) return false;
  if (selector.index !== undefined && index !== selector.index) return false;
  if (selector.priority !== undefined && priorityOf(route) !== selector.priority) return false;
  return selector.provider === undefined || providersOf(route).includes(selector.provider);
}

function describeSelector(selector: RouteSelector): string {
  const parts = [`prefix "${selector.prefix}"`];
  if (selector.provider !== undefined) parts.push(`provider "${selector.provider}"`);
  if (selector.priority !== undefined) parts.push(`priority ${selector.priority}`);
  if (selector.index !== undefined) parts.push(`index ${selector.index}`);
  return parts.join(" and ");
}

/** The first offered flag that names only this route among the matches; --index always does. */
function pickingFlag(routes: readonly unknown[], matches: readonly number[], index: number, offered: readonly SelectorFlag[]): string {
  const others = matches.filter((other) => other !== index).map((other) => routes[other]);
  if (offered.includes("provider")) {
    const own = providersOf(routes[index]).find((provider) => others.every((other) => !providersOf(other).includes(provider)));
    if (own !== undefined) return `--provider ${own}`;
  }
  if (offered.includes("priority") && others.every((other) => priorityOf(other) !== priorityOf(routes[index])))
    return `--priority ${priorityOf(routes[index])}`;
  return `--index ${index}`;
}

function flagUsage(flag: SelectorFlag): string {
  return { provider: "--provider NAME", priority: "--priority N", index: "--index N (the # of `gw routes list`)" }[flag];
}

function providersOf(route: unknown): string[] {
  if (!isWeighted(route)) return [stringField(route, "provider") ?? ""];
  return route.upstreams.map((upstream) => stringField(upstream, "provider") ?? "");
}

function priorityOf(route: unknown): number {
  const priority = isRecord(route) ? route.priority : undefined;
  return typeof priority === "number" ? priority : 0;
}
