// Inbound chat-completions request: strict about what the gateway relies on, open to every
// other OpenAI parameter (forwarded as sent).
import { z } from "zod";
import { formatJsonPath } from "../../config/config-error.js";
import { OUTPUT_CAP_FIELDS } from "../../providers/max-tokens.js";
import { InvalidRequestError } from "../errors.js";
import { parseOrFirstIssue } from "../request-schema.js";

const textPart = z.object({ type: z.literal("text"), text: z.string() }).loose();
const contentPart = z.object({ type: z.string() }).loose();
const content = z.union([z.string(), z.array(contentPart)]);

const message = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: z.union([z.string(), z.array(textPart)]), name: z.string().optional() }).loose(),
  z.object({ role: z.literal("developer"), content: z.union([z.string(), z.array(textPart)]), name: z.string().optional() }).loose(),
  z.object({ role: z.literal("user"), content, name: z.string().optional() }).loose(),
  z
    .object({ role: z.literal("assistant"), content: z.union([content, z.null()]).optional(), tool_calls: z.array(z.object({}).loose()).optional() })
    .loose()
    .refine((value) => (value.content !== undefined && value.content !== null ? true : Boolean(value.tool_calls?.length)), {
      message: "an assistant message needs content or tool_calls",
      path: ["content"],
    }),
  z.object({ role: z.literal("tool"), content: z.union([z.string(), z.array(textPart)]), tool_call_id: z.string().min(1) }).loose(),
]);

const outputCap = z.number().int().positive().nullable().optional();

export const chatRequestSchema = z
  .object({
    model: z.string().min(1),
    messages: z.array(message).min(1),
    stream: z.boolean().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    max_tokens: outputCap,
    max_completion_tokens: outputCap,
    // Other servers' names for the output cap: honoured as caps, never forwarded (providers/max-tokens.ts).
    max_output_tokens: outputCap,
    max_new_tokens: outputCap,
    n_predict: outputCap,
    max_length: outputCap,
    n: z.number().int().min(1).max(128).nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).loose().nullable().optional(),
    tools: z.array(z.object({ type: z.string() }).loose()).optional(),
  })
  .loose();

export type ChatRequestBody = z.infer<typeof chatRequestSchema>;

export function parseChatRequest(body: unknown): ChatRequestBody {
  const result = parseOrFirstIssue(chatRequestSchema, body);
  if (result.success) return result.data;
  const { issue } = result;
  const param = formatJsonPath(issue.path);
  throw new InvalidRequestError(describeIssue(param, issue), { param: param || undefined });
}

const OUTPUT_CAP_PARAMS: ReadonlySet<string> = new Set(OUTPUT_CAP_FIELDS);

function describeIssue(param: string, issue: z.core.$ZodIssue): string {
  if (!param) return `Invalid request body: ${issue.message}`;
  if (issue.code === "invalid_type" && issue.input === undefined) return `Missing required parameter: '${param}'.`;
  if (param === "temperature") return "Invalid 'temperature': must be a number between 0 and 2.";
  if (OUTPUT_CAP_PARAMS.has(param)) return `Invalid '${param}': must be a positive integer.`;
  return `Invalid '${param}': ${issue.message}.`;
}
