// OpenAI's `response_format` for Anthropic, which has no such field: a JSON answer is asked for as
// one forced tool call whose input schema is the answer's schema (Anthropic's own advice for JSON
// output), and the call's input comes back as the message's text (convert-from-anthropic-chat.ts).
// `json_object` is a tool that takes any object. Pure. docs/decisions.md §4.
import { isObject } from "../../json/json-values.js";
import { UnsupportedContentError } from "../provider-errors.js";
import type { AnthropicTool } from "./anthropic-api.js";

/** The answer tool for `json_object`: any JSON object. */
export const JSON_OBJECT_TOOL = "json_object";

/** Anthropic's (and OpenAI's) tool and schema names. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The forced tool that carries the answer, or undefined when the answer is plain text. */
export function answerToolFor(responseFormat: unknown): AnthropicTool | undefined {
  if (responseFormat === undefined || responseFormat === null) return undefined;
  const type = isObject(responseFormat) ? responseFormat.type : undefined;
  if (type === "text") return undefined;
  if (type === "json_object") {
    return { name: JSON_OBJECT_TOOL, description: "Give your answer as this tool's input: a JSON object, as asked.", input_schema: { type: "object" } };
  }
  if (type === "json_schema" && isObject(responseFormat)) return schemaTool(responseFormat.json_schema);
  throw new UnsupportedContentError(
    `Anthropic answers response_format text, json_object or json_schema; not ${JSON.stringify(type ?? responseFormat).slice(0, 40)}.`,
    "response_format",
  );
}

function schemaTool(format: unknown): AnthropicTool {
  if (!isObject(format) || typeof format.name !== "string" || !TOOL_NAME.test(format.name)) {
    throw new UnsupportedContentError(
      "response_format.json_schema needs a name of letters, digits, _ and - (at most 64), which becomes the answer tool's name.",
      "response_format.json_schema.name",
    );
  }
  const schema = format.schema === undefined ? {} : format.schema;
  if (!isObject(schema) || (schema.type !== undefined && schema.type !== "object")) {
    throw new UnsupportedContentError(
      "Anthropic returns a json_schema answer as a tool's input, which is a JSON object: the schema's root must be an object.",
      "response_format.json_schema.schema",
    );
  }
  const description = typeof format.description === "string" && format.description.trim() ? `${format.description.trim()} ` : "";
  return {
    name: format.name,
    description: `${description}Give your answer as this tool's input, following its schema.`,
    input_schema: { ...schema, type: "object" },
  };
}
