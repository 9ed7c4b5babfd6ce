// SearXNG's failures (https://docs.searxng.org/dev/search_api.html) -> the OpenAI error envelope. Its error answers are
// HTML pages or short texts, not JSON: the status says what happened. A 403 to format=json is an
// instance without `json` in search.formats.

import { type UpstreamHttpError, withOpenAIEnvelope } from "../provider-errors.js";

export const SEARXNG_JSON_DISABLED = "this SearXNG instance does not serve JSON: add json to search.formats in its settings.yml";

export function fromSearxngHttpError(error: UpstreamHttpError): UpstreamHttpError {
  if (error.status === 403) return withOpenAIEnvelope(error, { message: SEARXNG_JSON_DISABLED, type: "permission_error", code: "json_format_disabled" });
  if (error.status === 429)
    return withOpenAIEnvelope(error, {
      message: "the SearXNG instance's limiter refused the request (too many requests)",
      type: "rate_limit_error",
      code: "rate_limited",
    });
  if (error.status === 401) {
    return withOpenAIEnvelope(error, {
      message: "the SearXNG instance (or the proxy before it) refused the credentials",
      type: "authentication_error",
      code: "unauthorized",
    });
  }
  return withOpenAIEnvelope(error, { message: `SearXNG answered HTTP ${error.status}.`, code: `http_${error.status}` });
}
