// Providers as `gw providers` shows and edits them. Secrets are never printed: apiKey and header
// values go through maskSecret (env references as written, literals as ****).
import { maskSecret, type RawConfig } from "../config/config-file.js";
import { CliError, UsageError } from "./cli-error.js";
import { closestName } from "./command-suggestion.js";
import { implementedProviderTypes } from "./provider-types.js";
import { isRecord, objectAt, stringField } from "./raw-config.js";

/** The types src/providers/registry.ts implements; the gateway skips any other (provider-set.ts). */
export async function providerTypeNames(): Promise<string[]> {
  return [...(await implementedProviderTypes()).keys()];
}

export async function assertProviderType(type: string): Promise<void> {
  const names = await providerTypeNames();
  if (names.includes(type)) return;
  const guess = closestName(type, names);
  throw new UsageError(`unknown provider type "${type}": gw implements ${names.join(", ")}${guess ? `. Did you mean "${guess}"?` : ""}`);
}

/** `--header name=value` flags as a record (`name=` gives an empty value: `providers set` removes that header). */
export function parseHeaders(values: readonly string[]): Record<string, string> | undefined {
  if (values.length === 0) return undefined;
  const headers: Record<string, string> = {};
  for (const value of values) {
    const separator = value.indexOf("=");
    const name = separator > 0 ? value.slice(0, separator).trim() : "";
    if (!name) throw new UsageError(`--header "${value}": expected name=value`);
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

/** What `gw providers set` changes; an empty string removes the field (or, in headers, that header). */
export interface ProviderChanges {
  type?: string;
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

/**
 * Inside editConfig: change only the given fields of provider NAME. Returns the entry and what
 * changed, by field and header name only (never a value: they may be secrets).
 */
export function changeProvider(raw: RawConfig, name: string, changes: ProviderChanges): { entry: Record<string, unknown>; changed: string[] } {
  const providers = objectAt(raw, "providers");
  const entry = providers[name];
  if (entry === undefined) {
    const known = Object.keys(providers);
    throw new CliError(
      `no provider "${name}"; ${known.length ? `the providers are ${known.join(", ")}` : "there are none yet"} (add one with \`gw providers add NAME --type ...\`)`,
    );
  }
  if (!isRecord(entry)) throw new CliError(`config.json: providers.${name}: expected an object`);
  const changed: string[] = [];
  if (changes.type !== undefined) {
    entry.type = changes.type;
    changed.push("type");
  }
  for (const field of ["baseUrl", "apiKey"] as const) {
    const value = changes[field];
    if (value === undefined) continue;
    if (value === "") delete entry[field];
    else entry[field] = value;
    changed.push(value === "" ? `${field} removed` : field);
  }
  if (changes.headers) changed.push(...changeHeaders(entry, name, changes.headers));
  return { entry, changed };
}

/** Header names are matched case-insensitively, as HTTP does; an empty value removes the header. */
function changeHeaders(entry: Record<string, unknown>, provider: string, changes: Record<string, string>): string[] {
  if (entry.headers !== undefined && !isRecord(entry.headers)) throw new CliError(`config.json: providers.${provider}.headers: expected an object`);
  const headers: Record<string, unknown> = entry.headers ?? {};
  const changed: string[] = [];
  for (const [header, value] of Object.entries(changes)) {
    const existing = Object.keys(headers).find((name) => name.toLowerCase() === header.toLowerCase());
    if (value === "") {
      if (existing === undefined) throw new CliError(`provider "${provider}" has no header "${header}" to remove`);
      delete headers[existing];
      changed.push(`header ${existing} removed`);
    } else {
      if (existing !== undefined) delete headers[existing];
      headers[header] = value;
      changed.push(`header ${header}`);
    }
  }
  if (Object.keys(headers).length > 0) entry.headers = headers;
  else delete entry.headers;
  return changed;
}
