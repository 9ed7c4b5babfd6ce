// How every ElevenLabs call is made: the API origin (a base URL ending in /v1 works too), the key
// in `xi-api-key`, errors in the OpenAI envelope, `request-id` (or `x-request-id`). Shared by
// speech and the voice list.
import type { ProviderContext } from "../provider.js";
import { type VendorRequest, vendorRequest } from "../vendor-request.js";
import { ELEVENLABS_BASE_URL } from "./elevenlabs-api.js";
import { fromElevenLabsHttpError } from "./elevenlabs-error.js";

export function elevenLabsRequest(context: ProviderContext): VendorRequest {
  return vendorRequest(context, {
    defaultBaseUrl: ELEVENLABS_BASE_URL,
    baseUrl: (configured) => configured.replace(/\/v1$/, ""),
    key: { header: "xi-api-key" },
    mapError: fromElevenLabsHttpError,
    requestIdHeaders: ["request-id", "x-request-id"],
  });
}
