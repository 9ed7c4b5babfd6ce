// Inbound POST /anthropic/v1/messages body: model, max_tokens and messages are required; the
// rest of the Messages API passes through to native upstreams as sent.
import { z } from "zod";
import { formatJsonPath } from "../../config/config-error.js";
import { InvalidRequestError } from "../errors.js";
import { parseOrFirstIssue } from "../request-schema.js";
import type { MessagesRequest } from "./messages-types.js";

const block = z.object({ type: z.string().min(1) }).loose();

const messagesRequestSchema = z
  .object({
    model: z.string().min(1),
    max_tokens: z.number().int().nonnegative(),
    messages: z.array(z.object({ role: z.enum(["user", "assistant"]), content: z.union([z.string(), z.array(block)]) }).loose()).min(1),
    system: z.union([z.string(), z.array(z.object({ type: z.literal("text"), text: z.string() }).loose())]).optional(),
    stream: z.boolean().optional(),
    temperature: z.number().min(0).max(1).optional(),
    stop_sequences: z.array(z.string()).optional(),
    tools: z.array(z.object({ name: z.string().min(1) }).loose()).optional(),
  })
  .loose();

export function parseMessagesRequest(body: unknown): MessagesRequest {
  const result = parseOrFirstIssue(messagesRequestSchema, body);
  if (result.success) return result.data as MessagesRequest;
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
