// How every Brave Search call is made: the API origin (a base URL ending in /res/v1 works too), the
// key in `X-Subscription-Token`, JSON answers, errors in the OpenAI envelope.
import type { ProviderContext } from "../provider.js";
import { type VendorRequest, vendorRequest } from "../vendor-request.js";
import { BRAVE_BASE_URL } from "./brave-api.js";
import { fromBraveHttpError } from "./brave-error.js";

export function braveRequest(context: ProviderContext): VendorRequest {
  return vendorRequest(context, {
    defaultBaseUrl: BRAVE_BASE_URL,
    baseUrl: (configured) => configured.replace(/\/res\/v1$/, ""),
    key: { header: "x-subscription-token" },
    headers: { accept: "application/json" },
    mapError: fromBraveHttpError,
  });
}
