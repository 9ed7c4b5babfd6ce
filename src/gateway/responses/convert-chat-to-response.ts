// A chat completion as the Responses API's Response object
// (https://platform.openai.com/docs/api-reference/responses/object): the first choice's text as a
// `message` item with one `output_text` part, its tool calls as `function_call` items, the
// finish reason as the status, and the usage in the Responses names.
import { randomFillSync } from "node:crypto";
import { isObject, type Json } from "../../json/json-values.js";
import type { ChatCompletion, ChatUsage } from "../../providers/chat-types.js";
import { CREDITS_USAGE_FIELD } from "../billing/credits-in-usage.js";
import type { ResponsesRequest } from "./responses-request.js";
import { SEARCH_FUNCTION_NAME } from "./web-search-tool.js";

/** Random bytes for response ids, filled 128 ids at a time: randomBytes(24) per id costs about 7 µs on Node 20. */
const idBytes = Buffer.alloc(24 * 128);
let idBytesUsed = idBytes.length;

/** `resp_` and 48 random hex digits. */
export function newResponseId(): string {
  if (idBytesUsed === idBytes.length) {
    randomFillSync(idBytes);
    idBytesUsed = 0;
  }
  const hex = idBytes.toString("hex", idBytesUsed, idBytesUsed + 24);
  idBytesUsed += 24;
  return `resp_${hex}`;
}

/**
 * An item's id names its response and its place: `msg_<the response's hex>o0001` is output item 1,
 * `…i0003` input item 3. So an `item_reference` finds the stored response its item came from
 * without an index of items (docs/decisions.md §19).
 */
export function itemId(prefix: string, responseId: string, place: "i" | "o", index: number): string {
  return `${prefix}_${responseId.slice("resp_".length)}${place}${index.toString(16).padStart(4, "0")}`;
}

/** The response an item id made by itemId belongs to. */
export function responseIdOfItem(id: string): string | undefined {
  const match = /^[a-z]+_([0-9a-f]{48})[io][0-9a-f]{4,}$/.exec(id);
  return match ? `resp_${match[1]}` : undefined;
}

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  /** What the call cost, when the chat usage said it (a stream's usage chunk: docs/decisions.md §24). */
  gw_credits?: number;
}

/** Which response, when it was made, and the public model that answered. */
export interface ResponseIds {
  id: string;
  createdAt: number;
  model: string;
}

/**
 * The Response object around `output`: the request's settings echoed, as OpenAI does. The ids
 * come apart from the fields: merging them with a spread per call cost about 14 µs (V8's slow
 * path for a spread followed by more properties), more than the rest of the conversion.
 */
export function responseObject(
  request: ResponsesRequest,
  ids: ResponseIds,
  fields: { status: ResponseStatus; output: Json[]; usage?: ResponseUsage; finishReason?: string },
): Json {
  const incomplete = fields.status === "incomplete" ? { reason: incompleteReason(fields.finishReason) } : null;
  return {
    id: ids.id,
    object: "response",
    created_at: ids.createdAt,
    status: fields.status,
    // One shape for every status (a spread here would build the object key by key at run time).
    completed_at: fields.status === "completed" ? Math.floor(Date.now() / 1000) : null,
    error: null,
    incomplete_details: incomplete,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: ids.model,
    output: fields.output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    store: request.store ?? true,
    temperature: request.temperature ?? 1,
    text: { format: request.text?.format ?? { type: "text" } },
    tool_choice: request.tool_choice ?? "auto",
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    truncation: "disabled",
    usage: fields.usage ?? null,
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  };
}

/**
 * A finished chat completion as the Response; `earlier`: the items and usage of the model calls
 * before it that searched. Calls of gw's search function are gw's, never the client's: not shown.
 */
export function convertChatToResponse(
  request: ResponsesRequest,
  completion: ChatCompletion,
  ids: ResponseIds,
  earlier: { output: Json[]; usage?: ResponseUsage } = { output: [] },
): Json {
  const choice = completion.choices[0] ?? {};
  const message = isObject(choice.message) ? choice.message : {};
  const output: Json[] = [...earlier.output];
  const text = typeof message.content === "string" ? message.content : "";
  if (text !== "" || typeof message.refusal === "string")
    output.push(messageItem(itemId("msg", ids.id, "o", output.length), text, "completed", message.refusal));
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isObject(call) || !isObject(call.function) || call.function.name === SEARCH_FUNCTION_NAME) continue;
    output.push(functionCallItem(itemId("fc", ids.id, "o", output.length), call.id, call.function.name, call.function.arguments, "completed"));
  }
  const finishReason = typeof choice.finish_reason === "string" ? choice.finish_reason : undefined;
  const usage = addUsage(earlier.usage, responseUsage(completion.usage));
  return responseObject(request, ids, { status: statusOf(finishReason), output, usage, finishReason });
}

export function messageItem(id: string, text: string, status: ResponseStatus, refusal?: unknown): Json {
  const content: Json[] = [];
  if (text !== "" || typeof refusal !== "string") content.push(outputTextPart(text));
  if (typeof refusal === "string") content.push({ type: "refusal", refusal });
  return { type: "message", id, status, role: "assistant", content };
}

export function outputTextPart(text: string): Json {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

export function functionCallItem(id: string, callId: unknown, name: unknown, args: unknown, status: ResponseStatus): Json {
  return {
    type: "function_call",
    id,
    call_id: typeof callId === "string" && callId !== "" ? callId : `call_${id.slice(id.indexOf("_") + 1)}`,
    name: typeof name === "string" ? name : "",
    arguments: typeof args === "string" ? args : "",
    status,
  };
}

/** `length` and `content_filter` leave the answer incomplete; anything else completed it. */
export function statusOf(finishReason: string | undefined): ResponseStatus {
  return finishReason === "length" || finishReason === "content_filter" ? "incomplete" : "completed";
}

export function incompleteReason(finishReason: string | undefined): string {
  return finishReason === "content_filter" ? "content_filter" : "max_output_tokens";
}

/** The chat usage in the Responses names (the estimate when the upstream had none: the chat path fills it in). */
export function responseUsage(usage: ChatUsage | null | undefined): ResponseUsage | undefined {
  if (!usage) return undefined;
  const details = isObject(usage.completion_tokens_details) ? usage.completion_tokens_details : {};
  const converted: ResponseUsage = {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: typeof details.reasoning_tokens === "number" ? details.reasoning_tokens : 0 },
    total_tokens: usage.total_tokens,
  };
  const credits = (usage as { [CREDITS_USAGE_FIELD]?: unknown })[CREDITS_USAGE_FIELD];
  if (typeof credits === "number") converted.gw_credits = credits;
  return converted;
}

/**
 * The usage of two model calls of one response, added up (either may be missing). Without
 * `gw_credits`: a response that searched also paid for its searches, which no call's usage says.
 */
export function addUsage(first: ResponseUsage | undefined, second: ResponseUsage | undefined): ResponseUsage | undefined {
  if (!first || !second) return first ?? second;
  return {
    input_tokens: first.input_tokens + second.input_tokens,
    input_tokens_details: { cached_tokens: first.input_tokens_details.cached_tokens + second.input_tokens_details.cached_tokens },
    output_tokens: first.output_tokens + second.output_tokens,
    output_tokens_details: { reasoning_tokens: first.output_tokens_details.reasoning_tokens + second.output_tokens_details.reasoning_tokens },
    total_tokens: first.total_tokens + second.total_tokens,
  };
}
