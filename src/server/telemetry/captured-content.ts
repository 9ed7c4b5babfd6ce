// What `telemetry.captureContent: true` puts on a request's span (docs/decisions.md §26): what the
// request asked, in the GenAI conventions' shapes: `gen_ai.input.messages` (role and parts) and
// `gen_ai.system_instructions`, as JSON text. Text parts carry their text; any other part
// (pictures, audio, files) only its type, never its data. Answers are not captured: gw relays them
// without keeping them, streams chunk by chunk. Off by default: a prompt is the caller's data.
import { isObject } from "../../json/json-values.js";
import { GEN_AI } from "./gen-ai-conventions.js";

type Part = { type: "text"; content: string } | { type: string };
interface Message {
  role: string;
  parts: Part[];
}

/** The request body's input as span attributes: chat's and the messages endpoint's messages, Responses' and embeddings' input, an image prompt. */
export function inputContent(body: Record<string, unknown>): Record<string, string> {
  const messages: Message[] = [];
  if (Array.isArray(body.messages)) for (const message of body.messages) if (isObject(message)) messages.push(messageOf(message));
  if (typeof body.input === "string") messages.push(userText(body.input));
  else if (Array.isArray(body.input))
    for (const item of body.input) {
      if (typeof item === "string") messages.push(userText(item));
      else if (isObject(item) && "role" in item) messages.push(messageOf(item));
    }
  if (typeof body.prompt === "string") messages.push(userText(body.prompt));
  const attributes: Record<string, string> = {};
  if (messages.length > 0) attributes[GEN_AI.inputMessages] = JSON.stringify(messages);
  const system = body.system ?? body.instructions;
  if (system !== undefined) attributes[GEN_AI.systemInstructions] = JSON.stringify(partsOf(system));
  return attributes;
}

function messageOf(message: Record<string, unknown>): Message {
  return { role: typeof message.role === "string" ? message.role : "user", parts: partsOf(message.content) };
}

function userText(text: string): Message {
  return { role: "user", parts: [{ type: "text", content: text }] };
}

/** A content value (a string, or an array of parts) as the conventions' parts. */
function partsOf(content: unknown): Part[] {
  if (typeof content === "string") return [{ type: "text", content }];
  if (!Array.isArray(content)) return [];
  return content.map((part): Part => {
    if (typeof part === "string") return { type: "text", content: part };
    if (isObject(part) && typeof part.text === "string") return { type: "text", content: part.text };
    return { type: isObject(part) && typeof part.type === "string" ? part.type : "unknown" };
  });
}
