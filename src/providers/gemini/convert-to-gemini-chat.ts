// OpenAI chat-completions request -> Gemini generateContent request (https://ai.google.dev/api/generate-content). Pure.
// Left out, as Gemini would refuse or ignore them: logprobs, logit_bias, user, stream_options,
// parallel_tool_calls, service_tier, store, and presence/frequency penalties (several current
// Gemini models answer those with 400 "Penalty is not enabled"). response_format and
// reasoning_effort are mapped where Gemini can honour them and refused otherwise.

import { MAX_JSON_DEPTH, nestingDepthExceeds } from "../../json/json-nesting.js";
import { isObject, type Json } from "../../json/json-values.js";
import type { ChatRequest } from "../chat-types.js";
import { contentParts, functionToolsOf, imageUrlOf, namedToolChoice, parseDataUrl, parseToolArguments, textOf } from "../openai-message-parts.js";
import { UnsupportedContentError } from "../provider-errors.js";
import { convertResponseFormat } from "./convert-to-gemini-response-format.js";
import { convertReasoningEffort } from "./convert-to-gemini-thinking.js";
import type { GeminiContent, GeminiFunctionDeclaration, GeminiGenerationConfig, GeminiPart, GeminiRequest } from "./gemini-api.js";

export function convertToGeminiChat(request: ChatRequest): GeminiRequest {
  const system: Array<{ text: string }> = [];
  const contents: GeminiContent[] = [];
  // functionResponse parts name the function; OpenAI tool messages only carry the call's id.
  const toolNames = new Map<string, string>();
  request.messages.forEach((message, index) => {
    const param = `messages[${index}]`;
    switch (message.role) {
      case "system":
      case "developer": {
        const text = textOf(message.content);
        if (text.trim()) system.push({ text });
        return;
      }
      case "user":
        append(contents, "user", userParts(message.content, param));
        return;
      case "assistant":
        append(contents, "model", modelParts(message, param, toolNames));
        return;
      case "tool":
        append(contents, "user", [functionResponse(message, param, toolNames)]);
        return;
      default:
        throw new UnsupportedContentError(`Messages with role '${String(message.role)}' are not supported.`, `${param}.role`);
    }
  });
  if (contents.length === 0) throw new UnsupportedContentError("At least one user or assistant message is required.", "messages");
  // Function responses open their user turn, before any text sent after them.
  for (const content of contents) {
    if (content.role === "user") content.parts.sort((a, b) => Number("functionResponse" in b) - Number("functionResponse" in a));
  }
  const body: GeminiRequest = { contents };
  if (system.length > 0) body.systemInstruction = { parts: system };
  const generationConfig = convertGenerationConfig(request);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  const declarations = convertTools(request.tools);
  if (declarations) {
    body.tools = [{ functionDeclarations: declarations }];
    const toolConfig = convertToolChoice(request.tool_choice);
    if (toolConfig) body.toolConfig = toolConfig;
  }
  return body;
}

function append(contents: GeminiContent[], role: GeminiContent["role"], parts: GeminiPart[]): void {
  if (parts.length === 0) return;
  const last = contents.at(-1);
  if (last?.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

function userParts(content: unknown, param: string): GeminiPart[] {
  return contentParts(content).flatMap((part, index): GeminiPart[] => {
    const partParam = typeof content === "string" ? `${param}.content` : `${param}.content[${index}]`;
    if (part.type === "text") return typeof part.text === "string" && part.text ? [{ text: part.text }] : [];
    if (part.type === "image_url") return [inlineImage(imageUrlOf(part, partParam), partParam)];
    if (part.type === "input_audio" && isObject(part.input_audio)) {
      const { data, format } = part.input_audio;
      if (typeof data === "string" && typeof format === "string") return [{ inlineData: { mimeType: `audio/${format}`, data } }];
    }
    if (part.type === "file" && isObject(part.file) && typeof part.file.file_data === "string") {
      const inline = parseDataUrl(part.file.file_data);
      if (inline) return [{ inlineData: { mimeType: inline.mediaType, data: inline.data } }];
    }
    throw new UnsupportedContentError(`This '${String(part.type)}' content part is not supported by Gemini.`, partParam);
  });
}

function inlineImage(url: string, param: string): GeminiPart {
  const inline = parseDataUrl(url);
  // fileData only takes URIs of files uploaded to Gemini's Files API, not arbitrary web URLs: an
  // http(s) URL has been downloaded and made a data: URL before (inline-gemini-image-urls.ts).
  if (!inline) throw new UnsupportedContentError("Gemini takes images as base64 data: URLs, or http(s) URLs the gateway downloads.", param);
  return { inlineData: { mimeType: inline.mediaType, data: inline.data } };
}

function modelParts(message: Json, param: string, toolNames: Map<string, string>): GeminiPart[] {
  const text = textOf(message.content);
  const parts: GeminiPart[] = text ? [{ text }] : [];
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject) : [];
  calls.forEach((call, index) => {
    const fn = isObject(call.function) ? call.function : {};
    const callParam = `${param}.tool_calls[${index}]`;
    if (typeof fn.name !== "string") throw new UnsupportedContentError("A tool call needs a function name.", callParam);
    if (typeof call.id === "string") toolNames.set(call.id, fn.name);
    const part: GeminiPart = { functionCall: { name: fn.name, args: parseToolArguments(fn.arguments, `${callParam}.function.arguments`) } };
    // Thinking models need their signature back with the call; it rode out in extra_content.
    const signature = thoughtSignatureOf(call);
    if (signature) part.thoughtSignature = signature;
    parts.push(part);
  });
  return parts;
}

function thoughtSignatureOf(call: Json): string | undefined {
  const extra = isObject(call.extra_content) && isObject(call.extra_content.google) ? call.extra_content.google : undefined;
  return typeof extra?.thought_signature === "string" ? extra.thought_signature : undefined;
}

function functionResponse(message: Json, param: string, toolNames: Map<string, string>): GeminiPart {
  const name = typeof message.tool_call_id === "string" ? toolNames.get(message.tool_call_id) : undefined;
  if (!name) throw new UnsupportedContentError("A tool message must answer a tool call of an earlier assistant message.", `${param}.tool_call_id`);
  const text = textOf(message.content);
  // `response` must be an object: a JSON object result goes as it is, anything else (a result
  // nested too deep to re-serialise included) is wrapped as text.
  let response: Json = { result: text };
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed) && !nestingDepthExceeds(parsed, MAX_JSON_DEPTH)) response = parsed;
  } catch {
    // Plain text result.
  }
  return { functionResponse: { name, response } };
}

function convertGenerationConfig(request: ChatRequest): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  if (typeof request.temperature === "number") config.temperature = request.temperature;
  if (typeof request.top_p === "number") config.topP = request.top_p;
  if (typeof request.top_k === "number") config.topK = request.top_k;
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (typeof maxTokens === "number") config.maxOutputTokens = maxTokens;
  const stop = typeof request.stop === "string" ? [request.stop] : Array.isArray(request.stop) ? request.stop : [];
  const stopSequences = stop.filter((value): value is string => typeof value === "string" && value.length > 0);
  if (stopSequences.length > 0) config.stopSequences = stopSequences;
  if (typeof request.n === "number" && request.n > 1) config.candidateCount = request.n;
  if (typeof request.seed === "number") config.seed = request.seed;
  Object.assign(config, convertResponseFormat(request.response_format));
  const thinkingConfig = convertReasoningEffort(request.reasoning_effort);
  if (thinkingConfig) config.thinkingConfig = thinkingConfig;
  return config;
}

function convertTools(tools: unknown): GeminiFunctionDeclaration[] | undefined {
  return functionToolsOf(tools, "Gemini")?.map(({ name, description, parameters }) => {
    const declaration: GeminiFunctionDeclaration = { name };
    if (description !== undefined) declaration.description = description;
    // JSON Schema as OpenAI clients write it (additionalProperties ...) fits parametersJsonSchema;
    // `parameters` only takes Gemini's OpenAPI subset.
    if (parameters !== undefined) declaration.parametersJsonSchema = parameters;
    return declaration;
  });
}

function convertToolChoice(choice: unknown): GeminiRequest["toolConfig"] {
  if (choice === "auto") return { functionCallingConfig: { mode: "AUTO" } };
  if (choice === "none") return { functionCallingConfig: { mode: "NONE" } };
  if (choice === "required") return { functionCallingConfig: { mode: "ANY" } };
  const named = namedToolChoice(choice);
  return named === undefined ? undefined : { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [named] } };
}
