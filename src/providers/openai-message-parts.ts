// Reading the parts of an OpenAI chat request that converters to other vendors forward loosely
// (content parts, tool calls). Shared by the vendor folders; it depends on no vendor.
import { MAX_JSON_DEPTH, nestingDepthExceeds } from "../json/json-nesting.js";
import { isObject, type Json } from "../json/json-values.js";
import { UnsupportedContentError } from "./provider-errors.js";

/** Content as a list of parts: a string becomes one text part. */
export function contentParts(content: unknown): Json[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.filter(isObject) : [];
}

/** The text of a content value (string or parts), text parts joined without separator. */
export function textOf(content: unknown): string {
  return contentParts(content)
    .map((part) => (typeof part.text === "string" ? part.text : typeof part.refusal === "string" ? part.refusal : ""))
    .join("");
}

export interface DataUrl {
  mediaType: string;
  data: string;
}

/** `data:<media type>;base64,<data>`; undefined for any other URL. */
export function parseDataUrl(url: string): DataUrl | undefined {
  const match = /^data:([^;,]+)((?:;[^;,]+)*);base64,(.*)$/s.exec(url);
  if (!match) return undefined;
  return { mediaType: match[1]!.toLowerCase(), data: match[3]! };
}

/** The URL of an `image_url` part (`{url}` or, from some clients, a bare string). */
export function imageUrlOf(part: Json, param: string): string {
  const image = part.image_url;
  const url = isObject(image) ? image.url : image;
  if (typeof url !== "string" || url.length === 0) throw new UnsupportedContentError("An image_url part needs a url.", param);
  return url;
}

/** Tool-call arguments as the object vendors want; anything but a JSON object is refused. */
export function parseToolArguments(value: unknown, param: string): Json {
  if (value === undefined || value === "") return {};
  let parsed: unknown = value;
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new UnsupportedContentError("Tool call arguments must be a JSON object; these are not valid JSON.", param);
    }
    if (nestingDepthExceeds(parsed, MAX_JSON_DEPTH)) {
      throw new UnsupportedContentError(`Tool call arguments are nested more than ${MAX_JSON_DEPTH} levels deep.`, param);
    }
  }
  if (!isObject(parsed)) throw new UnsupportedContentError("Tool call arguments must be a JSON object.", param);
  return parsed;
}

/** An OpenAI function tool as the vendors' converters read it. */
export interface FunctionTool {
  name: string;
  description?: string;
  parameters?: Json;
}

/** `tools[]`'s functions; anything but a named function tool is refused, saying `vendor` takes none. Undefined for no tools. */
export function functionToolsOf(tools: unknown, vendor: string): FunctionTool[] | undefined {
  if (!Array.isArray(tools) || tools.length === 0) return undefined;
  return tools.map((tool, index) => {
    const fn = isObject(tool) && tool.type === "function" && isObject(tool.function) ? tool.function : undefined;
    if (!fn || typeof fn.name !== "string") throw new UnsupportedContentError(`Only function tools are supported by ${vendor}.`, `tools[${index}]`);
    const converted: FunctionTool = { name: fn.name };
    if (typeof fn.description === "string") converted.description = fn.description;
    if (isObject(fn.parameters)) converted.parameters = fn.parameters;
    return converted;
  });
}

/** The function a `tool_choice` object names (`{type: "function", function: {name}}`), else undefined. */
export function namedToolChoice(choice: unknown): string | undefined {
  return isObject(choice) && isObject(choice.function) && typeof choice.function.name === "string" ? choice.function.name : undefined;
}
