// How every Runway call is made: the API origin (a base URL ending in /v1 works too), the key as a
// Bearer token, the `X-Runway-Version` header, errors in the OpenAI envelope.
import type { ProviderContext } from "../provider.js";
import { type VendorRequest, vendorRequest } from "../vendor-request.js";
import { RUNWAY_API_VERSION, RUNWAY_BASE_URL } from "./runway-api.js";
import { fromRunwayHttpError } from "./runway-error.js";

export function runwayRequest(context: ProviderContext): VendorRequest {
  return vendorRequest(context, {
    defaultBaseUrl: RUNWAY_BASE_URL,
    baseUrl: (configured) => configured.replace(/\/v1$/, ""),
    key: { header: "authorization", scheme: "Bearer" },
    headers: { "x-runway-version": RUNWAY_API_VERSION },
    mapError: fromRunwayHttpError,
  });
}
