// How every Anthropic call is made: the API origin (a base URL ending in /v1 works too), the key in
// `x-api-key`, the `anthropic-version` header, errors in the OpenAI envelope, `request-id`.
import type { ProviderContext } from "../provider.js";
import { type VendorRequest, vendorRequest } from "../vendor-request.js";
import { ANTHROPIC_BASE_URL, ANTHROPIC_VERSION } from "./anthropic-api.js";
import { fromAnthropicHttpError } from "./anthropic-error.js";

export function anthropicRequest(context: ProviderContext): VendorRequest {
  return vendorRequest(context, {
    defaultBaseUrl: ANTHROPIC_BASE_URL,
    baseUrl: (configured) => configured.replace(/\/v1$/, ""),
    key: { header: "x-api-key" },
    headers: { "anthropic-version": ANTHROPIC_VERSION },
    mapError: fromAnthropicHttpError,
    requestIdHeaders: ["request-id"],
  });
}
