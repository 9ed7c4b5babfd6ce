// A Responses API request as a native upstream gets it (docs/decisions.md §19): the client's body
// with the upstream model, `store: false` (gw keeps the conversation, so any upstream can continue
// it), no output cap field (the provider writes the one reserved for as max_output_tokens) and no
// gateway control fields; `previous_response_id` and `item_reference`s replaced by the stored
// items they name, every input item without its `id` (the upstream keeps nothing, so it knows none
// of them), reasoning items without encrypted_content left out (nothing to read back). Everything else (reasoning, include, tools, text, unknown fields) passes as sent. And
// how big that request's prompt can be, for the credit reservation.
import { isObject, type Json, withoutFields } from "../../json/json-values.js";
import { imageDimensionsOf } from "../../media/image-dimensions.js";
import type { JsonObject } from "../../providers/chat-types.js";
import { withoutOutputCaps } from "../../providers/max-tokens.js";
import type { ImageDetail } from "../billing/image-tokens.js";
import type { PictureInPrompt, PromptMeasure } from "../billing/prompt-measure.js";
import { withoutGatewayControlFields } from "../chat/gateway-control-fields.js";
import type { Conversation } from "./response-conversation.js";
import type { ResponsesRequest } from "./responses-request.js";

/** Fields of the client's body the upstream never gets as sent: gw answers for them itself. */
const GATEWAY_HELD_FIELDS = ["previous_response_id", "stream", "store"];

/** The upstream's body, sans the model (each attempt names its own). */
export function nativeRequestBody(request: ResponsesRequest, conversation: Conversation): JsonObject {
  const body = withoutFields(withoutOutputCaps(withoutGatewayControlFields(request as JsonObject)), GATEWAY_HELD_FIELDS);
  return { ...body, input: nativeInput(request, conversation), store: false };
}

/**
 * The conversation as input: the previous response's items, then this request's input with its
 * item_references resolved. A string input with nothing before it stays the string it was.
 */
function nativeInput(request: ResponsesRequest, conversation: Conversation): string | Json[] {
  const history = upstreamItems(conversation.history);
  if (typeof request.input === "string") return history.length === 0 ? request.input : [...history, { role: "user", content: request.input }];
  // conversation.input[i] is request.input[i] as stored: for a reference, the item it names.
  return [...history, ...upstreamItems(request.input.map((item, index) => (item.type === "item_reference" ? (conversation.input[index] ?? item) : item)))];
}

/**
 * Items without their ids. A reasoning item without encrypted_content is left out: the upstream
 * keeps nothing, so only the encrypted content lets it read its reasoning back.
 */
function upstreamItems(items: readonly Json[]): Json[] {
  const kept: Json[] = [];
  for (const item of items) {
    if (item.type === "reasoning" && typeof item.encrypted_content !== "string") continue;
    kept.push(withoutFields(item, ["id"]));
  }
  return kept;
}

/**
 * The upstream request's prompt, bounded as chat's (prompt-measure.ts): the UTF-8 bytes of its
 * JSON (instructions, input, tools, text), pictures by their vendor's rule from their real size.
 * Encrypted reasoning content counts as its bytes: it stands for fewer tokens than that.
 */
export function measureNativePrompt(body: JsonObject): PromptMeasure {
  const pictures: PictureInPrompt[] = [];
  let pictureCharacters = 0;
  for (const item of Array.isArray(body.input) ? body.input : []) {
    if (!isObject(item) || !Array.isArray(item.content)) continue;
    for (const part of item.content) {
      if (!isObject(part) || part.type !== "input_image") continue;
      const detail = isDetail(part.detail) ? part.detail : undefined;
      const url = part.image_url;
      if (typeof url === "string" && url.startsWith("data:")) {
        pictures.push({ size: imageDimensionsOf(url), detail });
        pictureCharacters += url.length;
      } else {
        // By URL or by file id: the vendor's largest count is assumed.
        pictures.push({ size: undefined, detail });
      }
    }
  }
  const json = JSON.stringify([body.instructions, body.input, body.tools, body.text]);
  const tools = Array.isArray(body.tools) && body.tools.length > 0;
  return { bytes: Buffer.byteLength(json) - pictureCharacters, characters: json.length - pictureCharacters, pictures, tools };
}

/** The larger of two measures of one prompt (as sent natively, and as converted to chat): a bound for either. */
export function largerPrompt(first: PromptMeasure, second: PromptMeasure | undefined): PromptMeasure {
  if (!second) return first;
  const larger = second.bytes > first.bytes ? second : first;
  return { ...larger, tools: first.tools || second.tools };
}

function isDetail(value: unknown): value is ImageDetail {
  return value === "low" || value === "high" || value === "auto";
}
