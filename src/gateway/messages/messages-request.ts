// Inbound POST /anthropic/v1/messages body: model, max_tokens and messages are required; the
// rest of the Messages API passes through to native upstreams as sent. count_tokens takes the
// same prompt without max_tokens.
import { z } from "zod";
import { formatJsonPath } from "../../config/config-error.js";
import { InvalidRequestError } from "../errors.js";
import { parseOrFirstIssue } from "../request-schema.js";
import type { CountTokensRequest, MessagesRequest } from "./messages-types.js";

const block = z.object({ type: z.string().min(1) }).loose();
const content = z.union([z.string(), z.array(block)]);

/**
 * A turn, or a system message between turns (the mid-conversation-system beta Claude Code sends,
 * whose content may be left out when its output_config says what it is for).
 */
const message = z
  .object({ role: z.enum(["user", "assistant", "system"]), content: content.optional() })
  .loose()
  .superRefine((value, context) => {
    if (value.role !== "system" && value.content === undefined) context.addIssue({ code: "custom", path: ["content"], message: "Field required" });
  });

/** What a prompt is, for a message and for counting its tokens. */
const prompt = {
  model: z.string().min(1),
  messages: z.array(message).min(1),
  system: z.union([z.string(), z.array(z.object({ type: z.literal("text"), text: z.string() }).loose())]).optional(),
  tools: z.array(z.object({ name: z.string().min(1) }).loose()).optional(),
};

const messagesRequestSchema = z
  .object({
    ...prompt,
    max_tokens: z.number().int().nonnegative(),
    stream: z.boolean().optional(),
    temperature: z.number().min(0).max(1).optional(),
    stop_sequences: z.array(z.string()).optional(),
  })
  .loose();

/** POST /anthropic/v1/messages/count_tokens: the prompt, no max_tokens. */
const countTokensRequestSchema = z.object(prompt).loose();

export function parseMessagesRequest(body: unknown): MessagesRequest {
  return parseWith(messagesRequestSchema, body) as MessagesRequest;
}

export function parseCountTokensRequest(body: unknown): CountTokensRequest {
  return parseWith(countTokensRequestSchema, body) as CountTokensRequest;
}

function parseWith(schema: z.ZodType, body: unknown): unknown {
  const result = parseOrFirstIssue(schema, body);
  if (result.success) return result.data;
  const { issue } = result;
  const path = formatJsonPath(issue.path);
  throw new InvalidRequestError(describeIssue(path, issue), { param: path || undefined });
}

/** Anthropic's own wording where it matters: "max_tokens: Field required", "max_tokens: Input should be a valid integer". */
function describeIssue(path: string, issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type" && issue.input === undefined) return `${path}: Field required`;
  if (issue.code === "invalid_type" && path === "max_tokens") return "max_tokens: Input should be a valid integer";
  return `${path || "body"}: ${issue.message}`;
}
