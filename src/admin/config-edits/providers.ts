// Providers as `gw providers` and /admin/v1/providers show and edit them: the changes to the raw
// config both make (docs/decisions.md §25). Secrets are never shown: apiKey and header values go
// through maskSecret (env references as written, literals as ****).
import { maskSecret, type RawConfig } from "../../config/config-file.js";
import { closestName } from "../../text/closest-name.js";
import { AdminInputError } from "../admin-requests.js";
import { conflict, notFound } from "./config-edit-refusal.js";
import { arrayAt, isRecord, malformed, objectAt, stringField } from "./raw-config.js";

/**
 * Type -> capabilities ("chat", "image" ...) of the provider types gw implements
 * (src/providers/registry.ts, which this layer does not import: the caller passes them, the CLI
 * loading the registry on demand, the server from the gateway).
 */
export type ProviderTypeCapabilities = ReadonlyMap<string, readonly string[]>;

/** A type outside those gw implements is refused (the gateway would skip the provider), naming the nearest. */
export function checkProviderType(type: string, types: ProviderTypeCapabilities): void {
  const names = [...types.keys()];
  if (names.includes(type)) return;
  const guess = closestName(type, names);
  throw new AdminInputError("type", `unknown provider type "${type}": gw implements ${names.join(", ")}${guess ? `. Did you mean "${guess}"?` : ""}`);
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

/** What a new provider is: its type, and optionally where it is, its key and extra headers. */
export interface NewProvider {
  type: string;
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

/** Inside a config edit: add provider NAME; refused when the name is taken. Returns the entry written. */
export function addProvider(raw: RawConfig, name: string, provider: NewProvider): Record<string, unknown> {
  const providers = objectAt(raw, "providers");
  if (providers[name] !== undefined) throw conflict(`provider "${name}" already exists: change it with \`gw providers set ${name} ...\``);
  const entry: Record<string, unknown> = { type: provider.type };
  if (provider.baseUrl !== undefined) entry.baseUrl = provider.baseUrl;
  if (provider.apiKey !== undefined) entry.apiKey = provider.apiKey;
  if (provider.headers && Object.keys(provider.headers).length > 0) entry.headers = provider.headers;
  providers[name] = entry;
  return entry;
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

/** Inside a config edit: remove provider NAME, refused while a route sends traffic to it. Returns the removed entry. */
export function removeProvider(raw: RawConfig, name: string): unknown {
  const providers = objectAt(raw, "providers");
  if (providers[name] === undefined) throw notFound(`no provider "${name}"`);
  const users = routesUsing(arrayAt(raw, "routes"), name);
  if (users.length > 0) {
    const named = users.map((user) => `routes[${user.index}] (prefix "${user.prefix}")`).join(", ");
    throw conflict(
      `provider "${name}" is used by ${named}; remove or change ${users.length > 1 ? "those routes" : "that route"} first (\`gw routes remove PREFIX\`)`,
    );
  }
  const entry = providers[name];
  delete providers[name];
  return entry;
}

/** What `gw providers set` changes; an empty string removes the field (or, in headers, that header). */
export interface ProviderChanges {
  type?: string;
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

/**
 * Inside a config edit: change only the given fields of provider NAME. Returns the entry and what
 * changed, by field and header name only (never a value: they may be secrets).
 */
export function changeProvider(raw: RawConfig, name: string, changes: ProviderChanges): { entry: Record<string, unknown>; changed: string[] } {
  const providers = objectAt(raw, "providers");
  const entry = providers[name];
  if (entry === undefined) {
    const known = Object.keys(providers);
    throw notFound(
      `no provider "${name}"; ${known.length ? `the providers are ${known.join(", ")}` : "there are none yet"} (add one with \`gw providers add NAME --type ...\`)`,
    );
  }
  if (!isRecord(entry)) throw malformed(`providers.${name}`, "an object");
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
  if (entry.headers !== undefined && !isRecord(entry.headers)) throw malformed(`providers.${provider}.headers`, "an object");
  const headers: Record<string, unknown> = entry.headers ?? {};
  const changed: string[] = [];
  for (const [header, value] of Object.entries(changes)) {
    const existing = Object.keys(headers).find((name) => name.toLowerCase() === header.toLowerCase());
    if (value === "") {
      if (existing === undefined) throw new AdminInputError("headers", `provider "${provider}" has no header "${header}" to remove`);
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
