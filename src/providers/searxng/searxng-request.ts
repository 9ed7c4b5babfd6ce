// How every call to a SearXNG instance is made: its configured address (no default: it is
// self-hosted; `/search` at its end works too), an optional key as a Bearer token for instances
// behind an authenticating proxy, JSON answers, failures in the OpenAI envelope.
import type { ProviderContext } from "../provider.js";
import { type VendorRequest, vendorRequest } from "../vendor-request.js";
import { fromSearxngHttpError } from "./searxng-error.js";

export function searxngRequest(context: ProviderContext): VendorRequest {
  return vendorRequest(context, {
    baseUrlHint: "your SearXNG instance's address",
    baseUrl: (configured) => configured.replace(/\/search$/, ""),
    key: { header: "authorization", scheme: "Bearer" },
    headers: { accept: "application/json" },
    mapError: fromSearxngHttpError,
  });
}
