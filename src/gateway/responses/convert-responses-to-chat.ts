// A Responses API request as the chat completion every chat upstream takes (docs/decisions.md
// §19): instructions and system/developer items become system messages, function_call items an
// assistant turn's tool_calls, function_call_output items tool messages; function tools, the
// tool choice, text.format and reasoning.effort map onto their chat fields. Reasoning items are
// dropped (a converted upstream cannot read them back), and so are web_search_call items (the
// answer written from the results follows them); item_references are resolved before
// (responses-service.ts). The hosted web_search tool becomes gw's search function when gw serves
// it (web-search-tool.ts); else it is left out and named in `droppedTools`, as `namespace` always
// is (Codex sends both on every call); other hosted tools are refused.
import { isObject, type Json } from "../../json/json-values.js";
import type { JsonObject } from "../../providers/chat-types.js";
import type { ChatRequestBody } from "../chat/chat-request.js";
import { InvalidRequestError } from "../errors.js";
import { convertedParamsIgnored } from "./converted-params.js";
import type { ResponsesRequest } from "./responses-request.js";
import { SEARCH_FUNCTION_NAME, searchFunctionTool, WEB_SEARCH_TOOL_TYPES } from "./web-search-tool.js";

/** Hosted tools left out of the upstream call, with a warning header, rather than refused: clients send them on every call. */
const LEFT_OUT_TOOLS = new Set(["namespace"]);

export interface ConvertedRequest {
  chat: ChatRequestBody;
  /** Tool types left out of the upstream call, for the warning header. */
  droppedTools: string[];
  /** The request had a web_search tool and the model is offered gw's search function for it. */
  searchOffered: boolean;
  /** Hints a chat completion cannot carry, left out, for the warning header (converted-params.ts). */
  paramsIgnored: string[];
}

/** An item the model is to see, and where it came from (`input[2]`), for the message of a 400. */
export interface PlacedItem {
  item: Json;
  at: string;
}

/**
 * `items`: the conversation so far (a previous response's, then this request's input), item_references resolved.
 * `serveWebSearch`: gw can search for this caller; otherwise web_search tools are left out.
 * `providerOf`: the route's provider the chat completion goes to, asked only to name it when a
 * parameter is refused (none when the model has no route: the chat call then answers that).
 */
export function convertResponsesToChat(
  request: ResponsesRequest,
  items: readonly PlacedItem[],
  serveWebSearch = false,
  providerOf: () => string | undefined = () => undefined,
): ConvertedRequest {
  if (request.background) throw new InvalidRequestError("background responses are not supported by this gateway.", { param: "background" });
  const paramsIgnored = convertedParamsIgnored(request, providerOf);
  const messages: JsonObject[] = [];
  if (request.instructions) messages.push({ role: "system", content: request.instructions });
  for (const { item, at } of items) addItem(messages, item, at);
  if (!messages.some((message) => message.role !== "system")) {
    throw new InvalidRequestError("The input has no user or assistant turn to answer.", { param: "input" });
  }

  const chat: JsonObject = { model: request.model, messages };
  const { tools, dropped, searchOffered } = convertTools(request.tools ?? [], serveWebSearch);
  if (tools.length > 0) chat.tools = tools;
  if (request.tool_choice !== undefined && tools.length > 0) chat.tool_choice = convertToolChoice(request.tool_choice);
  if (request.parallel_tool_calls != null && tools.length > 0) chat.parallel_tool_calls = request.parallel_tool_calls;
  if (request.temperature != null) chat.temperature = request.temperature;
  if (request.top_p != null) chat.top_p = request.top_p;
  if (request.max_output_tokens != null) chat.max_tokens = request.max_output_tokens;
  if (request.user !== undefined) chat.user = request.user;
  const format = request.text?.format;
  if (format?.type === "json_object") chat.response_format = { type: "json_object" };
  if (format?.type === "json_schema") {
    const schema: JsonObject = { name: format.name, schema: format.schema };
    if (format.description !== undefined) schema.description = format.description;
    if (format.strict != null) schema.strict = format.strict;
    chat.response_format = { type: "json_schema", json_schema: schema };
  }
  const effort = request.reasoning?.effort;
  if (effort) chat.reasoning_effort = effort;
  return { chat: chat as ChatRequestBody, droppedTools: dropped, searchOffered, paramsIgnored };
}

function addItem(messages: JsonObject[], item: Json, at: string): void {
  const type = item.type ?? "message";
  switch (type) {
    case "message":
      messages.push(convertMessage(item, at));
      return;
    case "function_call": {
      const callId = requiredText(item.call_id, `${at}.call_id`);
      const name = requiredText(item.name, `${at}.name`);
      const toolCall = { id: callId, type: "function", function: { name, arguments: typeof item.arguments === "string" ? item.arguments : "{}" } };
      // Calls made in one turn (parallel tool calls, or text then calls) are one assistant message.
      const last = messages.at(-1);
      if (last?.role === "assistant") {
        last.tool_calls = [...((last.tool_calls as JsonObject[] | undefined) ?? []), toolCall];
      } else {
        messages.push({ role: "assistant", content: null, tool_calls: [toolCall] });
      }
      return;
    }
    case "function_call_output":
      messages.push({ role: "tool", tool_call_id: requiredText(item.call_id, `${at}.call_id`), content: outputText(item.output, `${at}.output`) });
      return;
    case "reasoning":
      // The upstream's own reasoning from an earlier turn: only the model that wrote it reads it back.
      return;
    case "web_search_call":
      // It names a query and URLs, not what the model read; the answer it led to follows it.
      return;
    default:
      throw new InvalidRequestError(`${at}: input items of type '${String(type)}' are not supported by this gateway.`, { param: `${at}.type` });
  }
}

function convertMessage(item: Json, at: string): JsonObject {
  const role = item.role;
  if (role === "system" || role === "developer") return { role: "system", content: plainText(item.content, `${at}.content`) };
  if (role === "assistant") return { role: "assistant", content: plainText(item.content, `${at}.content`) };
  if (role !== "user") throw new InvalidRequestError(`Invalid '${at}.role': expected one of user, system, developer, assistant.`, { param: `${at}.role` });
  if (typeof item.content === "string") return { role: "user", content: item.content };
  if (!Array.isArray(item.content)) throw new InvalidRequestError(`Invalid '${at}.content': expected a string or a list of parts.`, { param: `${at}.content` });
  const parts = item.content.map((part, index) => userPart(part, `${at}.content[${index}]`));
  // One text part is sent as a string, as a chat client writes it: some chat-only servers take nothing else.
  const only = parts.length === 1 ? parts[0] : undefined;
  return { role: "user", content: only?.type === "text" ? only.text : parts };
}

function userPart(part: unknown, at: string): JsonObject {
  if (!isObject(part)) throw new InvalidRequestError(`Invalid '${at}': expected an object.`, { param: at });
  switch (part.type) {
    case "input_text":
    case "text":
    case "output_text":
      return { type: "text", text: requiredText(part.text, `${at}.text`, true) };
    case "input_image": {
      if (typeof part.image_url !== "string" || part.image_url === "") {
        const why =
          part.file_id !== undefined ? "file_id images are not supported by this gateway; send image_url (a URL or a data: URL)" : "image_url is missing";
        throw new InvalidRequestError(`Invalid '${at}': ${why}.`, { param: `${at}.image_url` });
      }
      const image: JsonObject = { url: part.image_url };
      if (typeof part.detail === "string" && part.detail !== "auto") image.detail = part.detail;
      return { type: "image_url", image_url: image };
    }
    default:
      throw new InvalidRequestError(`Invalid '${at}': parts of type '${String(part.type)}' are not supported by this gateway.`, { param: `${at}.type` });
  }
}

/** A string, or text parts (input_text, output_text, refusal) joined: what a system or assistant turn carries. */
function plainText(content: unknown, at: string): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw new InvalidRequestError(`Invalid '${at}': expected a string or a list of text parts.`, { param: at });
  return content
    .map((part, index) => {
      if (!isObject(part)) throw new InvalidRequestError(`Invalid '${at}[${index}]': expected an object.`, { param: `${at}[${index}]` });
      if (part.type === "refusal") return requiredText(part.refusal, `${at}[${index}].refusal`, true);
      if (part.type === "input_text" || part.type === "output_text" || part.type === "text") return requiredText(part.text, `${at}[${index}].text`, true);
      throw new InvalidRequestError(`Invalid '${at}[${index}]': only text parts are allowed here, not '${String(part.type)}'.`, {
        param: `${at}[${index}].type`,
      });
    })
    .join("");
}

/** A function_call_output's output: a string, or parts whose text is joined. */
function outputText(output: unknown, at: string): string {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return plainText(output, at);
  throw new InvalidRequestError(`Invalid '${at}': expected a string.`, { param: at });
}

function requiredText(value: unknown, param: string, emptyAllowed = false): string {
  if (typeof value === "string" && (emptyAllowed || value !== "")) return value;
  throw new InvalidRequestError(value === undefined ? `Missing required parameter: '${param}'.` : `Invalid '${param}': expected a string.`, { param });
}

function convertTools(
  tools: ReadonlyArray<{ type: string } & Json>,
  serveWebSearch: boolean,
): { tools: JsonObject[]; dropped: string[]; searchOffered: boolean } {
  const converted: JsonObject[] = [];
  const dropped: string[] = [];
  const searchOffered = serveWebSearch && tools.some((tool) => WEB_SEARCH_TOOL_TYPES.has(tool.type));
  // Offered first, once, however many web_search tools (dated, preview) the request names.
  if (searchOffered) converted.push(searchFunctionTool());
  for (const [index, tool] of tools.entries()) {
    if (tool.type === "function") {
      const name = requiredText(tool.name, `tools[${index}].name`);
      if (searchOffered && name === SEARCH_FUNCTION_NAME) {
        throw new InvalidRequestError(
          `Invalid 'tools[${index}].name': '${SEARCH_FUNCTION_NAME}' is the function this gateway serves web_search with; rename yours.`,
          {
            param: `tools[${index}].name`,
          },
        );
      }
      const definition: JsonObject = { name, parameters: isObject(tool.parameters) ? tool.parameters : { type: "object", properties: {} } };
      if (typeof tool.description === "string") definition.description = tool.description;
      if (typeof tool.strict === "boolean") definition.strict = tool.strict;
      converted.push({ type: "function", function: definition });
    } else if (WEB_SEARCH_TOOL_TYPES.has(tool.type) && searchOffered) {
      // Served by the function offered above.
    } else if (LEFT_OUT_TOOLS.has(tool.type) || WEB_SEARCH_TOOL_TYPES.has(tool.type)) {
      if (!dropped.includes(tool.type)) dropped.push(tool.type);
    } else {
      throw new InvalidRequestError(`Invalid 'tools[${index}]': hosted tools of type '${tool.type}' are not supported by this gateway.`, {
        param: `tools[${index}].type`,
      });
    }
  }
  return { tools: converted, dropped, searchOffered };
}

function convertToolChoice(choice: NonNullable<ResponsesRequest["tool_choice"]>): unknown {
  if (typeof choice === "string") return choice;
  if (choice.type === "function" && typeof choice.name === "string") return { type: "function", function: { name: choice.name } };
  throw new InvalidRequestError(`Invalid 'tool_choice': a choice of type '${choice.type}' is not supported by this gateway.`, { param: "tool_choice" });
}
