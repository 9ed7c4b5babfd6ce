// How every OpenAI call is made: the configured base URL (with /v1) or OpenAI's, the key as a
// Bearer token, errors in OpenAI's own envelope (or one built from the status), `x-request-id`.
import type { ProviderContext } from "../provider.js";
import { type VendorRequest, vendorRequest } from "../vendor-request.js";
import { OPENAI_BASE_URL } from "./openai-api.js";
import { fromOpenAIHttpError } from "./openai-error.js";

export function openaiRequest(context: ProviderContext): VendorRequest {
  return vendorRequest(context, {
    defaultBaseUrl: OPENAI_BASE_URL,
    key: { header: "authorization", scheme: "Bearer" },
    mapError: fromOpenAIHttpError,
    requestIdHeaders: ["x-request-id"],
  });
}
