// Routes as `gw routes` writes and shows them.
import type { RouteConfig } from "../config/config-schema.js";
import { CliError } from "./cli-error.js";

export interface UpstreamSpec {
  provider: string;
  model: string;
  weight?: number;
}

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
  if (!provider || !model) throw new CliError(`--upstream "${value}": expected provider:model[:weight]`);
  return weight === undefined ? { provider, model } : { provider, model, weight };
}

export function routeTarget(route: RouteConfig): string {
  if (route.upstreams) return route.upstreams.map((upstream) => `${upstream.provider}:${upstream.model}:${upstream.weight}`).join(", ");
  return route.provider ?? "";
}
