// How every Stability call is made: the API origin (a base URL ending in /v2beta works too), the
// key as a Bearer token, `accept: image/*` (the picture's bytes, its metadata in headers), errors
// in the OpenAI envelope.
import type { ProviderContext } from "../provider.js";
import { type VendorRequest, vendorRequest } from "../vendor-request.js";
import { STABILITY_BASE_URL } from "./stability-api.js";
import { fromStabilityHttpError } from "./stability-error.js";

export function stabilityRequest(context: ProviderContext): VendorRequest {
  return vendorRequest(context, {
    defaultBaseUrl: STABILITY_BASE_URL,
    baseUrl: (configured) => configured.replace(/\/v2beta$/, ""),
    key: { header: "authorization", scheme: "Bearer" },
    headers: { accept: "image/*" },
    mapError: fromStabilityHttpError,
  });
}
