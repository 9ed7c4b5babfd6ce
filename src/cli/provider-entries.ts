// Providers on the command line: `--header name=value` flags, and the provider type checked as a
// usage error. The entries themselves are changed by src/admin/config-edits/providers.ts, which
// the admin API shares.
import { AdminInputError } from "../admin/admin-requests.js";
import { checkProviderType, type ProviderView } from "../admin/config-edits/providers.js";
import type { ProviderListing } from "../client/admin-client.js";
import { UsageError } from "./cli-error.js";
import { implementedProviderTypes } from "./provider-types.js";

/** A type gw does not implement is wrong in itself: a usage error (exit 2) naming the nearest. */
export async function assertProviderType(type: string): Promise<void> {
  try {
    checkProviderType(type, await implementedProviderTypes());
  } catch (error) {
    if (error instanceof AdminInputError) throw new UsageError(error.message);
    throw error;
  }
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

/** A provider as a gateway's admin API shows it, in the form the local commands print. */
export function listedProviderView(listed: ProviderListing): ProviderView {
  const view: ProviderView = { name: listed.name, type: listed.type };
  if (listed.baseUrl !== null) view.baseUrl = listed.baseUrl;
  if (listed.apiKey !== null) view.apiKey = listed.apiKey;
  if (Object.keys(listed.headers).length > 0) view.headers = listed.headers;
  return view;
}
