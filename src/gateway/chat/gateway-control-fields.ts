// Request fields that other gateways (LiteLLM, its proxy) act on: where to send the call, with
// which key, a canned answer instead of a call, their own fallbacks. Sent to an upstream that is
// such a gateway, they would let a caller redirect gw's call or its key, so they never leave gw.
import { withoutFields } from "../../json/json-values.js";

const GATEWAY_CONTROL_FIELDS = [
  "api_base",
  "base_url",
  "api_key",
  "api_version",
  "custom_llm_provider",
  "mock_response",
  "mock_tool_calls",
  "fallbacks",
  "context_window_fallback_dict",
  "user_config",
  "extra_headers",
  "num_retries",
] as const;

/** The request without those fields (a copy only when one is present: the common case costs one check per field). */
export function withoutGatewayControlFields<T extends object>(request: T): T {
  return withoutFields(request, GATEWAY_CONTROL_FIELDS);
}
