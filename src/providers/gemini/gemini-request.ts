// How every Gemini Developer API call is made: `{base}/models/{model}:{method}` with the key in
// `x-goog-api-key`, errors in the OpenAI envelope. The configured base URL may name the API
// version (`.../v1beta`) or just the origin. Gemini sends no documented request-id header.
import type { ProviderContext } from "../provider.js";
import { type VendorRequest, vendorRequest } from "../vendor-request.js";
import { GEMINI_BASE_URL } from "./gemini-api.js";
import { fromGeminiHttpError } from "./gemini-error.js";

export function geminiRequest(context: ProviderContext): VendorRequest {
  return vendorRequest(context, {
    defaultBaseUrl: GEMINI_BASE_URL,
    baseUrl: (configured) => (/\/v\d+(?:alpha|beta)?$/.test(configured) ? configured : `${configured}/v1beta`),
    key: { header: "x-goog-api-key" },
    mapError: fromGeminiHttpError,
  });
}

/** `/models/{model}:{method}`; a model given as `models/x` or `tunedModels/x` keeps its collection. */
export function geminiModelPath(model: string, method: string): string {
  return `/${geminiModelName(model).split("/").map(encodeURIComponent).join("/")}:${method}`;
}

/** The model's resource name: `models/{model}` unless it names its collection. */
export function geminiModelName(model: string): string {
  return model.includes("/") ? model : `models/${model}`;
}
