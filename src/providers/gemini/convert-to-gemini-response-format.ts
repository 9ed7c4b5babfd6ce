// OpenAI's `response_format` for Gemini: `json_object` is JSON output (responseMimeType
// application/json); `json_schema` is that plus its schema as responseJsonSchema (JSON Schema as
// OpenAI clients write it; responseSchema takes only Gemini's OpenAPI subset); `text` is Gemini's
// default. Any other format is refused, never dropped. Pure. docs/decisions.md §4.
import { isObject } from "../../json/json-values.js";
import { UnsupportedContentError } from "../provider-errors.js";
import type { GeminiGenerationConfig } from "./gemini-api.js";

export type GeminiResponseFormat = Pick<GeminiGenerationConfig, "responseMimeType" | "responseJsonSchema">;

export function convertResponseFormat(responseFormat: unknown): GeminiResponseFormat {
  if (responseFormat === undefined || responseFormat === null) return {};
  const type = isObject(responseFormat) ? responseFormat.type : undefined;
  if (type === "text") return {};
  if (type === "json_object") return { responseMimeType: "application/json" };
  if (type === "json_schema" && isObject(responseFormat)) return schemaFormat(responseFormat.json_schema);
  throw new UnsupportedContentError(
    `Gemini answers response_format text, json_object or json_schema; not ${JSON.stringify(type ?? responseFormat).slice(0, 40)}.`,
    "response_format",
  );
}

function schemaFormat(format: unknown): GeminiResponseFormat {
  if (!isObject(format)) throw new UnsupportedContentError("Gemini needs response_format.json_schema to be an object.", "response_format.json_schema");
  // OpenAI's schema is optional: without one the answer is any JSON.
  if (format.schema === undefined) return { responseMimeType: "application/json" };
  if (!isObject(format.schema))
    throw new UnsupportedContentError("Gemini takes a JSON Schema object as the json_schema's schema.", "response_format.json_schema.schema");
  return { responseMimeType: "application/json", responseJsonSchema: format.schema };
}
