// How every Tavily call is made: the configured base URL or Tavily's, the key as a Bearer token
// (`tvly-...`), JSON answers, errors in the OpenAI envelope.
import type { ProviderContext } from "../provider.js";
import { type VendorRequest, vendorRequest } from "../vendor-request.js";
import { TAVILY_BASE_URL } from "./tavily-api.js";
import { fromTavilyHttpError } from "./tavily-error.js";

export function tavilyRequest(context: ProviderContext): VendorRequest {
  return vendorRequest(context, {
    defaultBaseUrl: TAVILY_BASE_URL,
    key: { header: "authorization", scheme: "Bearer" },
    headers: { accept: "application/json" },
    mapError: fromTavilyHttpError,
  });
}
