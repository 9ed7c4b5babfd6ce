// The conversation a Responses API call continues (docs/decisions.md §19): a previous response's
// input and output items (`previous_response_id`), then this request's input, with every
// `item_reference` replaced by the stored item it names. Only the caller's agent's responses are
// read; another agent's id is "not found", exactly as a missing one.
import { isObject, type Json } from "../../json/json-values.js";
import type { ResponseStore, StoredResponse } from "../../store/response-records.js";
import { InvalidRequestError, ResponseNotFoundError } from "../errors.js";
import { itemId, responseIdOfItem } from "./convert-chat-to-response.js";
import type { PlacedItem } from "./convert-responses-to-chat.js";
import type { ResponsesRequest } from "./responses-request.js";

export interface Conversation {
  /** What the model sees, in order, each with where it came from. */
  items: PlacedItem[];
  /** This request's input items as stored: typed, with ids (items the client named keep theirs); as sent for `store: false`. */
  input: Json[];
  /** The previous response's items (its input, then its output), as stored. */
  history: Json[];
}

export async function conversationOf(request: ResponsesRequest, agentId: string, responseId: string, store: ResponseStore): Promise<Conversation> {
  const history = request.previous_response_id ? await previousItems(store, agentId, request.previous_response_id) : [];
  const raw: Json[] = typeof request.input === "string" ? [{ role: "user", content: request.input }] : request.input;
  const input: Json[] = [];
  for (const [index, item] of raw.entries()) {
    const resolved = item.type === "item_reference" ? await referencedItem(store, agentId, item, `input[${index}]`) : item;
    // Nothing is kept for `store: false`: the item goes to the conversion as it came.
    input.push(request.store === false ? resolved : storedItem(resolved, responseId, history.length + index));
  }
  return {
    items: [...history.map((item) => ({ item, at: "previous_response_id" })), ...input.map((item, index) => ({ item, at: `input[${index}]` }))],
    input,
    history,
  };
}

/** The caller's stored response, or 404 as for a missing one. */
export async function storedResponseOf(store: ResponseStore, agentId: string, id: string, param?: string): Promise<StoredResponse> {
  const record = await store.get(id);
  if (!record || record.agentId !== agentId) throw new ResponseNotFoundError(`Response with id '${id}'`, param);
  return record;
}

async function previousItems(store: ResponseStore, agentId: string, id: string): Promise<Json[]> {
  const record = await storedResponseOf(store, agentId, id, "previous_response_id");
  const output = Array.isArray(record.response.output) ? record.response.output.filter(isObject) : [];
  return [...record.input, ...output];
}

async function referencedItem(store: ResponseStore, agentId: string, reference: Json, at: string): Promise<Json> {
  const id = reference.id;
  if (typeof id !== "string" || id === "") throw new InvalidRequestError(`Missing required parameter: '${at}.id'.`, { param: `${at}.id` });
  const responseId = responseIdOfItem(id);
  const record = responseId === undefined ? undefined : await store.get(responseId);
  const items = record && record.agentId === agentId ? [...record.input, ...(Array.isArray(record.response.output) ? record.response.output : [])] : [];
  const found = items.find((item) => isObject(item) && item.id === id);
  if (!isObject(found)) throw new ResponseNotFoundError(`Item with id '${id}'`, `${at}.id`);
  return found;
}

/** An input item as stored and listed: typed, its content as parts, an id when it had none. */
function storedItem(item: Json, responseId: string, index: number): Json {
  const type = typeof item.type === "string" ? item.type : "message";
  const id = typeof item.id === "string" && item.id !== "" ? item.id : itemId(ITEM_PREFIX[type] ?? "item", responseId, "i", index);
  if (type !== "message") return { ...item, id };
  const textType = item.role === "assistant" ? "output_text" : "input_text";
  const content = typeof item.content === "string" ? [{ type: textType, text: item.content }] : item.content;
  return { type, id, role: item.role, content, ...(item.status === undefined ? {} : { status: item.status }) };
}

const ITEM_PREFIX: Record<string, string> = { message: "msg", function_call: "fc", function_call_output: "fco", reasoning: "rs", web_search_call: "ws" };
