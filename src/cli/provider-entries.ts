// Providers as `gw providers` shows and edits them. Secrets are never printed: apiKey and header
// values go through maskSecret (env references as written, literals as ****).
import { maskSecret } from "../config/config-file.js";
import { CliError } from "./cli-error.js";
import { isRecord, stringField } from "./raw-config.js";

/** Types gw knows, including vendors whose adapters arrive later; `--type` accepts these and the registry's. */
export const KNOWN_PROVIDER_TYPES = ["openai", "anthropic", "gemini", "stability", "deepgram", "elevenlabs", "runway", "luma", "brave", "tavily", "searxng", "local"] as const;

export async function providerTypeNames(): Promise<string[]> {
  // Loaded on demand: the registry pulls in every vendor adapter, which only `providers add` needs.
  const { providerTypes } = await import("../providers/registry.js");
  return [...new Set([...providerTypes.keys(), ...KNOWN_PROVIDER_TYPES])];
}

export async function assertProviderType(type: string): Promise<void> {
  const names = await providerTypeNames();
  if (!names.includes(type)) throw new CliError(`unknown provider type "${type}": known types are ${names.join(", ")}`);
}

/** `--header name=value` flags as a record. */
export function parseHeaders(values: readonly string[]): Record<string, string> | undefined {
  if (values.length === 0) return undefined;
  const headers: Record<string, string> = {};
  for (const value of values) {
    const separator = value.indexOf("=");
    const name = separator > 0 ? value.slice(0, separator).trim() : "";
    if (!name) throw new CliError(`--header "${value}": expected name=value`);
    headers[name] = value.slice(separator + 1);
  }
  return headers;
}

export interface ProviderView {
  name: string;
  type: string;
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

/** A raw provider entry with its secrets masked. */
export function providerView(name: string, entry: unknown): ProviderView {
  const view: ProviderView = { name, type: stringField(entry, "type") ?? "?" };
  const baseUrl = stringField(entry, "baseUrl");
  if (baseUrl !== undefined) view.baseUrl = baseUrl;
  const apiKey = maskSecret(stringField(entry, "apiKey"));
  if (apiKey !== undefined) view.apiKey = apiKey;
  const headers = isRecord(entry) ? entry.headers : undefined;
  if (isRecord(headers)) {
    view.headers = Object.fromEntries(Object.entries(headers).map(([header, value]) => [header, maskSecret(typeof value === "string" ? value : "") ?? ""]));
  }
  return view;
}

/** Routes (index and prefix) that send traffic to a provider. */
export function routesUsing(routes: readonly unknown[], provider: string): Array<{ index: number; prefix: string }> {
  const users: Array<{ index: number; prefix: string }> = [];
  routes.forEach((route, index) => {
    const upstreams = isRecord(route) && Array.isArray(route.upstreams) ? route.upstreams : [];
    if (stringField(route, "provider") === provider || upstreams.some((upstream) => stringField(upstream, "provider") === provider)) {
      users.push({ index, prefix: stringField(route, "prefix") ?? "?" });
    }
  });
  return users;
}
