// Inbound POST /v1/responses body (https://platform.openai.com/docs/api-reference/responses/create):
// strict about the fields gw reads and converts, open to the rest. Input items are checked where
// they are converted (convert-responses-to-chat.ts), with a message that names the item.
import { z } from "zod";
import { formatJsonPath } from "../../config/config-error.js";
import { InvalidRequestError } from "../errors.js";
import { parseOrFirstIssue } from "../request-schema.js";

const item = z.object({}).loose();

const textFormat = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }).loose(),
  z.object({ type: z.literal("json_object") }).loose(),
  z
    .object({
      type: z.literal("json_schema"),
      name: z.string().min(1),
      schema: z.object({}).loose(),
      description: z.string().optional(),
      strict: z.boolean().nullable().optional(),
    })
    .loose(),
]);

const toolChoice = z.union([
  z.enum(["auto", "none", "required"]),
  z.object({ type: z.literal("function"), name: z.string().min(1) }).loose(),
  z.object({ type: z.string() }).loose(),
]);

export const responsesRequestSchema = z
  .object({
    model: z.string().min(1),
    input: z.union([z.string(), z.array(item)]),
    instructions: z.string().nullable().optional(),
    tools: z.array(z.object({ type: z.string() }).loose()).optional(),
    tool_choice: toolChoice.optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    max_output_tokens: z.number().int().positive().nullable().optional(),
    text: z.object({ format: textFormat.optional() }).loose().nullable().optional(),
    reasoning: z
      .object({
        effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).nullable().optional(),
        summary: z.enum(["auto", "concise", "detailed"]).nullable().optional(),
      })
      .loose()
      .nullable()
      .optional(),
    metadata: z.record(z.string(), z.string()).nullable().optional(),
    user: z.string().optional(),
    store: z.boolean().nullable().optional(),
    previous_response_id: z.string().min(1).nullable().optional(),
    include: z.array(z.string()).nullable().optional(),
    prompt_cache_key: z.string().optional(),
    stream: z.boolean().nullable().optional(),
    background: z.boolean().nullable().optional(),
  })
  .loose();

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;

export function parseResponsesRequest(body: unknown): ResponsesRequest {
  const result = parseOrFirstIssue(responsesRequestSchema, body);
  if (result.success) return result.data;
  const { issue } = result;
  const param = formatJsonPath(issue.path);
  if (!param) throw new InvalidRequestError(`Invalid request body: ${issue.message}`);
  if (issue.code === "invalid_type" && issue.input === undefined) throw new InvalidRequestError(`Missing required parameter: '${param}'.`, { param });
  throw new InvalidRequestError(`Invalid '${param}': ${issue.message}.`, { param });
}
