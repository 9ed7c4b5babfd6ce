// Where a Gemini Developer API call goes: `{base}/models/{model}:{method}` with the key in
// `x-goog-api-key`. The configured base URL may name the API version (`.../v1beta`) or just the
// origin.
import { type UpstreamTarget, upstreamTarget } from "../../net/upstream-http.js";
import type { ProviderContext } from "../provider.js";

export interface GeminiEndpoint {
  headers: Record<string, string>;
  /** `models/{model}:{method}`; a model given as `models/x` or `tunedModels/x` keeps its collection. */
  targetFor(model: string, method: string): UpstreamTarget;
}

export function geminiEndpoint(context: ProviderContext): GeminiEndpoint {
  let baseUrl = (context.config.baseUrl ?? "https://generativelanguage.googleapis.com/v1beta").replace(/\/+$/, "");
  if (!/\/v\d+(?:alpha|beta)?$/.test(baseUrl)) baseUrl += "/v1beta";
  const base = upstreamTarget(baseUrl);
  const headers: Record<string, string> = { "content-type": "application/json", ...context.config.headers };
  if (context.config.apiKey) headers["x-goog-api-key"] = context.config.apiKey;
  return {
    headers,
    targetFor(model, method) {
      return { origin: base.origin, path: `${base.path}/${geminiModelName(model).split("/").map(encodeURIComponent).join("/")}:${method}` };
    },
  };
}

/** The model's resource name: `models/{model}` unless it names its collection. */
export function geminiModelName(model: string): string {
  return model.includes("/") ? model : `models/${model}`;
}
