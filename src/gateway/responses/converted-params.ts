// What a Responses request asks that a chat completion cannot carry (docs/decisions.md §19), for
// the converted path only: a provider that speaks /v1/responses itself judges its own fields.
// Two kinds. A field that changes what the answer holds (logprobs, truncation, a tool-call cap,
// a stored conversation or prompt of OpenAI's) is refused with a 400 naming it and the provider,
// never dropped in silence. A hint that leaves the answer as it is (a prompt-cache key, a
// reasoning summary from a model whose reasoning a chat completion does not return, a service
// tier, a client's own metadata, a field gw does not know) is left out of the upstream call and
// named in the `x-service-params-ignored` header: clients such as Codex send them on every call,
// and refusing them would refuse the client.
import { isObject } from "../../json/json-values.js";
import { InvalidRequestError } from "../errors.js";
import type { ResponsesRequest } from "./responses-request.js";

/** Top-level fields the conversion reads and honours (gw keeps metadata, store and previous_response_id itself). */
const HONOURED_FIELDS = new Set([
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "temperature",
  "top_p",
  "max_output_tokens",
  "text",
  "reasoning",
  "metadata",
  "user",
  "store",
  "previous_response_id",
  "include",
  "stream",
  "background",
]);

/** `include` values a converted response honours: its sources are in every web_search_call, its input pictures in the stored input. */
const HONOURED_INCLUDES = new Set(["web_search_call.action.sources", "message.input_image.image_url"]);

/** `include` values that ask for what a converted upstream does not return: reasoning items (it returns none to carry it). */
const HINT_INCLUDES = new Set(["reasoning.encrypted_content"]);

/**
 * The hints of the request that are not sent upstream, by name, for the warning header. Throws a
 * 400 for what cannot be honoured, naming `providerOf()` (asked only then: it resolves the route);
 * none when the model has no route (the chat call answers that).
 */
export function convertedParamsIgnored(request: ResponsesRequest, providerOf: () => string | undefined): string[] {
  refuseUnless(request.truncation === undefined || request.truncation === null || request.truncation === "disabled", "truncation", providerOf);
  refuseUnless(request.top_logprobs === undefined || request.top_logprobs === null || request.top_logprobs === 0, "top_logprobs", providerOf);
  refuseUnless(request.max_tool_calls === undefined || request.max_tool_calls === null, "max_tool_calls", providerOf);
  refuseUnless(request.conversation === undefined || request.conversation === null, "conversation", providerOf);
  refuseUnless(request.prompt === undefined || request.prompt === null, "prompt", providerOf);

  const ignored: string[] = [];
  for (const [field, value] of Object.entries(request)) {
    if (value === undefined || value === null || HONOURED_FIELDS.has(field) || REFUSED_FIELDS.has(field)) continue;
    ignored.push(field);
  }
  if (request.reasoning?.summary) ignored.push("reasoning.summary");
  if (isObject(request.text)) for (const field of Object.keys(request.text)) if (field !== "format") ignored.push(`text.${field}`);
  (request.include ?? []).forEach((value, index) => {
    if (HINT_INCLUDES.has(value)) ignored.push(`include=${value}`);
    else refuseUnless(HONOURED_INCLUDES.has(value), `include[${index}]`, providerOf, `'${value}' cannot be included`);
  });
  return ignored;
}

const REFUSED_FIELDS = new Set(["truncation", "top_logprobs", "max_tool_calls", "conversation", "prompt"]);

function refuseUnless(honoured: boolean, param: string, providerOf: () => string | undefined, what = `'${param}' is not supported`): void {
  if (honoured) return;
  const provider = providerOf();
  if (provider === undefined) return;
  throw new InvalidRequestError(`${what} on provider '${provider}': gw serves /v1/responses there over chat completions, which cannot honour it.`, {
    param,
    provider,
  });
}
