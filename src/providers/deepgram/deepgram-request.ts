// How every Deepgram call is made: the API origin (a base URL ending in /v1 works too), the key as
// `Authorization: Token ...`, errors in the OpenAI envelope, `dg-request-id`.
import type { ProviderContext } from "../provider.js";
import { type VendorRequest, vendorRequest } from "../vendor-request.js";
import { DEEPGRAM_BASE_URL } from "./deepgram-api.js";
import { fromDeepgramHttpError } from "./deepgram-error.js";

export function deepgramRequest(context: ProviderContext): VendorRequest {
  return vendorRequest(context, {
    defaultBaseUrl: DEEPGRAM_BASE_URL,
    baseUrl: (configured) => configured.replace(/\/v1$/, ""),
    key: { header: "authorization", scheme: "Token" },
    mapError: fromDeepgramHttpError,
    requestIdHeaders: ["dg-request-id"],
  });
}
