/**
 * POST /v1/responses of the fake OpenAI upstream (fakes/openai.ts), in OpenAI's wire format
 * (node_modules/openai/resources/responses/responses.d.ts; the SDK's ResponseStream reads it):
 *  - request: `model`, `input` (a string or a list of items); validated like the real API where
 *    gw's native pass-through depends on it: with `store: false` nothing is kept, so a
 *    `previous_response_id`, an `item_reference` or an input item carrying an `id` is refused (400,
 *    OpenAI's messages), as api.openai.com refuses them.
 *  - answer: a Response object; with `reasoning` in the request, first a `reasoning` item (`rs_…`;
 *    its summary when `reasoning.summary` asks; `encrypted_content` when `include` names
 *    `reasoning.encrypted_content`), then the text as a `message` item (`msg_…`), then each tool
 *    call as a `function_call` item (`fc_…`). Usage in the Responses names.
 *  - stream: response.created, response.in_progress, per item output_item.added, its deltas and
 *    .done events, output_item.done, then response.completed (or .incomplete when finishReason is
 *    `length`); every event with `type` and `sequence_number` from 0, `event:` lines, no [DONE].
 *  Behaviours (FakeBehaviour): content, toolCalls, usage, omitUsage, finishReason, dropAfterChunks
 *  (after N delta events the socket is destroyed), status/errorBody handled by the caller.
 */
import { randomBytes } from "node:crypto";
import type http from "node:http";

export interface ResponsesBehaviour {
  content?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  usage?: { prompt_tokens: number; completion_tokens: number };
  omitUsage?: boolean;
  finishReason?: string;
  dropAfterChunks?: number;
}

export interface ResponsesIo {
  res: http.ServerResponse;
  closed: AbortSignal;
  /** Destroy the connection on purpose (not counted as the client going away). */
  drop: () => void;
  sendJson: (status: number, body: unknown) => void;
}

/** Reasoning tokens the fake reports for a reasoning item. */
export const FAKE_REASONING_TOKENS = 7;

let responseCounter = 0;

function apiError(message: string, param: string | null, code: string | null): { error: Record<string, unknown> } {
  return { error: { message, type: "invalid_request_error", param, code } };
}

function partsText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : ""))
    .filter((text) => text !== "")
    .join(" ");
}

function lastUserText(input: unknown[]): string {
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i] as { role?: unknown; content?: unknown } | undefined;
    if (item && typeof item === "object" && item.role === "user") return partsText(item.content);
  }
  return "";
}

function words(text: string): number {
  return text.split(/\s+/).filter((word) => word.length > 0).length;
}

function pieces(text: string): string[] {
  return text.length === 0 ? [] : text.split(/(?<=\S)(?=\s)/).filter((piece) => piece.length > 0);
}

/** A refusal as OpenAI words it, or undefined when the request is one the real API takes. */
function refusal(body: Record<string, any>): { error: Record<string, unknown> } | undefined {
  if (body.input === undefined) return apiError("Missing required parameter: 'input'.", "input", "missing_required_parameter");
  if (typeof body.input !== "string" && !Array.isArray(body.input)) return apiError("Invalid type for 'input'.", "input", "invalid_type");
  if (body.store === false && typeof body.previous_response_id === "string") {
    return apiError(`Previous response with id '${body.previous_response_id}' not found.`, "previous_response_id", "previous_response_not_found");
  }
  for (const [index, item] of (Array.isArray(body.input) ? body.input : []).entries()) {
    if (!item || typeof item !== "object") continue;
    if (item.type === "item_reference" || (body.store === false && typeof item.id === "string")) {
      return apiError(
        `Item with id '${item.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
        `input[${index}]`,
        null,
      );
    }
  }
  return undefined;
}

interface StreamStep {
  data: Record<string, unknown>;
  /** Counts toward dropAfterChunks. */
  delta: boolean;
}

export async function serveResponses(body: Record<string, any>, b: ResponsesBehaviour, io: ResponsesIo): Promise<void> {
  const refused = refusal(body);
  if (refused) return io.sendJson(400, refused);

  responseCounter += 1;
  const id = `resp_fake${String(responseCounter).padStart(6, "0")}${randomBytes(8).toString("hex")}`;
  const input: unknown[] = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
  const toolCalls = b.toolCalls && b.toolCalls.length > 0 ? b.toolCalls : undefined;
  const text: string | null = b.content !== undefined ? b.content : toolCalls ? null : `echo: ${lastUserText(input)}`;
  const reasoning = body.reasoning && typeof body.reasoning === "object" ? (body.reasoning as { summary?: unknown }) : undefined;
  const include: unknown[] = Array.isArray(body.include) ? body.include : [];

  const output: Array<Record<string, unknown>> = [];
  if (reasoning) {
    const item: Record<string, unknown> = { id: `rs_fake${responseCounter}`, type: "reasoning", summary: [] };
    if (typeof reasoning.summary === "string") item.summary = [{ type: "summary_text", text: "**Thinking** about the question" }];
    // Real encrypted content is base64 (with + / =): kept by a pass-through byte for byte.
    if (include.includes("reasoning.encrypted_content")) item.encrypted_content = `gAAAAAB${randomBytes(96).toString("base64")}`;
    output.push(item);
  }
  if (text !== null) {
    output.push({
      id: `msg_fake${responseCounter}`,
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
    });
  }
  for (const [index, call] of (toolCalls ?? []).entries()) {
    output.push({
      id: `fc_fake${responseCounter}_${index}`,
      type: "function_call",
      status: "completed",
      call_id: call.id,
      name: call.name,
      arguments: call.arguments,
    });
  }

  const textPieces = text === null ? [] : pieces(text);
  const reasoningTokens = reasoning ? FAKE_REASONING_TOKENS : 0;
  const inputTokens = b.usage?.prompt_tokens ?? input.reduce<number>((sum, item) => sum + 3 + words(partsText((item as { content?: unknown })?.content)), 0);
  const outputTokens = b.usage?.completion_tokens ?? textPieces.length + (toolCalls?.length ?? 0) + reasoningTokens;
  const usage = b.omitUsage
    ? null
    : {
        input_tokens: inputTokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: outputTokens,
        output_tokens_details: { reasoning_tokens: reasoningTokens },
        total_tokens: inputTokens + outputTokens,
      };
  const incomplete = b.finishReason === "length";
  const created = Math.floor(Date.now() / 1000);
  const response = (status: string, items: Array<Record<string, unknown>>, withUsage: boolean): Record<string, unknown> => ({
    id,
    object: "response",
    created_at: created,
    status,
    background: false,
    completed_at: status === "completed" ? created : null,
    error: null,
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model,
    output: items,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    reasoning: { effort: reasoning ? ((reasoning as { effort?: unknown }).effort ?? "medium") : null, summary: reasoning?.summary ?? null },
    service_tier: "default",
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: "text" }, verbosity: "medium" },
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: "disabled",
    usage: withUsage ? usage : null,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  });
  const finalStatus = incomplete ? "incomplete" : "completed";

  if (body.stream !== true) return io.sendJson(200, response(finalStatus, output, true));

  // ---- Streaming ----
  const steps: StreamStep[] = [];
  const step = (type: string, fields: Record<string, unknown>, delta = false) => steps.push({ data: { type, ...fields }, delta });
  step("response.created", { response: response("in_progress", [], false) });
  step("response.in_progress", { response: response("in_progress", [], false) });
  for (const [index, item] of output.entries()) {
    const at = { item_id: item.id, output_index: index };
    if (item.type === "reasoning") {
      step("response.output_item.added", { output_index: index, item: { id: item.id, type: "reasoning", summary: [] } });
      for (const [summaryIndex, part] of (item.summary as Array<{ text: string }>).entries()) {
        step("response.reasoning_summary_part.added", { ...at, summary_index: summaryIndex, part: { type: "summary_text", text: "" } });
        for (const piece of pieces(part.text)) step("response.reasoning_summary_text.delta", { ...at, summary_index: summaryIndex, delta: piece }, true);
        step("response.reasoning_summary_text.done", { ...at, summary_index: summaryIndex, text: part.text });
        step("response.reasoning_summary_part.done", { ...at, summary_index: summaryIndex, part: { type: "summary_text", text: part.text } });
      }
    } else if (item.type === "message") {
      step("response.output_item.added", { output_index: index, item: { ...item, status: "in_progress", content: [] } });
      const partAt = { ...at, content_index: 0 };
      step("response.content_part.added", { ...partAt, part: { type: "output_text", text: "", annotations: [], logprobs: [] } });
      for (const piece of textPieces) step("response.output_text.delta", { ...partAt, delta: piece, logprobs: [] }, true);
      step("response.output_text.done", { ...partAt, text, logprobs: [] });
      step("response.content_part.done", { ...partAt, part: { type: "output_text", text, annotations: [], logprobs: [] } });
    } else {
      step("response.output_item.added", { output_index: index, item: { ...item, status: "in_progress", arguments: "" } });
      const args = String(item.arguments);
      for (let i = 0; i < args.length; i += 8) step("response.function_call_arguments.delta", { ...at, delta: args.slice(i, i + 8) }, true);
      step("response.function_call_arguments.done", { ...at, arguments: args });
    }
    step("response.output_item.done", { output_index: index, item });
  }
  step(incomplete ? "response.incomplete" : "response.completed", { response: response(finalStatus, output, true) });

  const { res, closed } = io;
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
  const write = (chunk: string): Promise<void> =>
    new Promise((resolve) => {
      if (res.destroyed || closed.aborted) return resolve();
      const done = () => {
        closed.removeEventListener("abort", done);
        resolve();
      };
      closed.addEventListener("abort", done, { once: true });
      res.write(chunk, done);
    });
  let deltas = 0;
  for (const [sequence, { data, delta }] of steps.entries()) {
    if (b.dropAfterChunks !== undefined && delta && deltas >= b.dropAfterChunks) return io.drop();
    if (closed.aborted) return;
    await write(`event: ${data.type}\ndata: ${JSON.stringify({ ...data, sequence_number: sequence })}\n\n`);
    if (delta) deltas += 1;
  }
  if (b.dropAfterChunks !== undefined) return io.drop();
  res.end();
}
