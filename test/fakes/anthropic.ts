/**
 * Fake Anthropic Messages upstream used by the gateway's tests.
 *
 * Wire format follows /work/shared/reference/anthropic-messages.md:
 *  - POST /v1/messages (JSON, or SSE with `event:` + `data:` lines), GET /v1/models,
 *    POST /v1/messages/count_tokens (`{"input_tokens": N}`, N counted as a message's input
 *    usage is, unless `usage.input_tokens` says; errors as `status` says); everything else 404.
 *  - Errors: {type:"error", error:{type, message}, request_id}; `request-id` on every response;
 *    `retry-after` on errors when asked.
 *  - Streaming: message_start, per block content_block_start / deltas / content_block_stop (a
 *    ping after the first block start), message_delta (stop_reason, cumulative output usage),
 *    message_stop. No [DONE].
 *  - Validates like the real API where it matters: x-api-key and anthropic-version headers,
 *    unknown top-level fields, max_tokens required, roles user/assistant alternating and
 *    starting with user, no system role in messages unless the anthropic-beta header names
 *    mid-conversation-system-2026-04-07 (then a system message may sit between turns, and the
 *    turns on either side of it may share a role),
 *    context_management only under a context-management-* beta, non-empty text blocks, image sources,
 *    tool_result blocks right after tool_use, temperature range, and sampling parameters on
 *    "newer" models (those refuse temperature != 1, top_p < 0.99 and any top_k).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type AnswerMeter, type AnswerPacing, sendPaced, writeEndlessEvents } from "./paced-answers.js";

export interface AnthropicFakeBehaviour {
  status?: number; // non-200: respond with an Anthropic error body with this status
  errorBody?: unknown; // override the error JSON body (a string is sent as it is)
  retryAfter?: string; // value of retry-after on error responses
  firstByteDelayMs?: number; // wait before writing response headers
  chunkDelayMs?: number; // wait between SSE events when streaming
  dropAfterChunks?: number; // streaming: destroy the socket after N content events
  dropConnection?: boolean; // destroy the socket immediately
  content?: string; // reply text; default `echo: <text of the last user turn>`
  toolUses?: Array<{ id: string; name: string; input: Record<string, unknown> }>; // reply with tool_use blocks
  thinking?: string; // put a thinking block first (a client must not see it)
  stopReason?: string; // override stop_reason
  usage?: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
  omitOutputTokens?: boolean; // the final usage has no output_tokens: the message's usage, and streamed a message_delta with `usage: {}` (message_start still says output_tokens 1)
  streamError?: { type: string; message: string; afterChunks?: number }; // streaming: `error` event after N content events, then end
  rawEvents?: Array<{ event?: string; data: string }>; // streaming 200: these events (`event:` line only when named, `data:` as given), in one write, then end
  writeToMaxTokens?: boolean; // write exactly max_tokens words (one output token each), as a model that runs to its cap
  pacing?: AnswerPacing; // non-streaming 200 written paced (paced-answers.ts), padded where `content` holds PAD_MARKER
  endless?: { everyMs?: number; meter?: AnswerMeter }; // streaming: after message_start and the text block's start, text deltas of 1 KB until the client goes away
}

export interface AnthropicFakeOptions {
  /** Models that refuse sampling parameters (default: current naming above version 4.6). */
  fixedSamplingModels?: RegExp;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export interface FakeAnthropic {
  url: string; // base URL without /v1, like https://api.anthropic.com
  port: number;
  requests: RecordedRequest[];
  set(behaviour: AnthropicFakeBehaviour): void;
  enqueue(...behaviours: AnthropicFakeBehaviour[]): void;
  reset(): void;
  activeStreams(): number;
  aborted(): number;
  close(): Promise<void>;
}

const TOP_LEVEL_FIELDS = new Set([
  "model",
  "max_tokens",
  "messages",
  "system",
  "stop_sequences",
  "temperature",
  "top_p",
  "top_k",
  "tools",
  "tool_choice",
  "stream",
  "metadata",
  "thinking",
  "service_tier",
  "container",
  "output_config",
  "cache_control",
  "inference_geo",
  "mcp_servers",
]);
const IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);
const DEFAULT_FIXED_SAMPLING = /^claude-(?:opus|sonnet|haiku)-(?:4-(?:[7-9]|\d\d)(?!\d)|[5-9]|\d\d)/;
const MODELS = [
  { type: "model", id: "claude-sonnet-4-5-20250929", display_name: "Claude Sonnet 4.5", created_at: "2025-09-29T00:00:00Z" },
  { type: "model", id: "claude-haiku-4-5-20251001", display_name: "Claude Haiku 4.5", created_at: "2025-10-01T00:00:00Z" },
];

const ERROR_TYPES: Record<number, [string, string]> = {
  400: ["invalid_request_error", "Invalid request (fake upstream)."],
  401: ["authentication_error", "invalid x-api-key"],
  402: ["billing_error", "Your credit balance is too low to access the Anthropic API."],
  403: ["permission_error", "Your API key does not have permission to use the specified resource."],
  404: ["not_found_error", "Not found (fake upstream)."],
  413: ["request_too_large", "Request exceeds the maximum allowed number of bytes."],
  429: ["rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit (fake upstream)."],
  500: ["api_error", "Internal server error (fake upstream)."],
  504: ["timeout_error", "Request timed out (fake upstream)."],
  529: ["overloaded_error", "Overloaded"],
};

class InvalidRequest extends Error {}

export function errorBody(status: number, message?: string, requestId = "req_fake"): unknown {
  const [type, text] = ERROR_TYPES[status] ?? (status >= 500 ? ["api_error", `Upstream error ${status}.`] : ["invalid_request_error", `HTTP ${status}.`]);
  return { type: "error", error: { type, message: message ?? text }, request_id: requestId };
}

function textOfBlocks(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: any) => (block?.type === "text" ? block.text : block?.type === "tool_result" ? textOfBlocks(block.content) : ""))
    .filter((text: unknown) => typeof text === "string" && text.length > 0)
    .join(" ");
}

function words(text: string): number {
  return text.split(/\s+/).filter((word) => word.length > 0).length;
}

/** The fake's input token count of a prompt: the words of its messages' and system's JSON. */
function promptTokens(body: any): number {
  return words(JSON.stringify(body.messages)) + words(JSON.stringify(body.system ?? ""));
}

function pieces(text: string): string[] {
  return text.length === 0 ? [] : text.split(/(?<=\S)(?=\s)/);
}

function fragments(text: string, size = 8): string[] {
  const out: string[] = [];
  for (let index = 0; index < text.length; index += size) out.push(text.slice(index, index + size));
  return out;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

/** The betas a request names (`anthropic-beta`, comma-joined). */
function betasOf(request: http.IncomingMessage): Set<string> {
  const header = request.headers["anthropic-beta"];
  const joined = Array.isArray(header) ? header.join(",") : (header ?? "");
  return new Set(
    joined
      .split(",")
      .map((beta) => beta.trim())
      .filter(Boolean),
  );
}

const MID_CONVERSATION_SYSTEM_BETA = "mid-conversation-system-2026-04-07";

/** Fields a beta adds to the request body. */
function allowedField(key: string, betas: Set<string>): boolean {
  if (key === "context_management") return [...betas].some((beta) => beta.startsWith("context-management-"));
  return TOP_LEVEL_FIELDS.has(key);
}

/** Throws InvalidRequest with the real API's wording (as far as the reference records it). */
function validate(body: any, fixedSampling: RegExp, betas: Set<string> = new Set()): void {
  validatePromptFields(body, betas, { countOnly: false });
  validateSampling(body, fixedSampling);
  if (body.stop_sequences !== undefined) {
    if (!Array.isArray(body.stop_sequences) || body.stop_sequences.some((stop: unknown) => typeof stop !== "string" || !stop.trim())) {
      throw new InvalidRequest("stop_sequences: each stop sequence must contain non-whitespace");
    }
  }
  validateTools(body);
  validateThinking(body);
  validateMessages(body.messages, betas.has(MID_CONVERSATION_SYSTEM_BETA));
}

/** POST /v1/messages/count_tokens: the prompt's fields as for a message, without max_tokens and the sampling ones. */
function validateCount(body: any, betas: Set<string>): void {
  validatePromptFields(body, betas, { countOnly: true });
  validateTools(body);
  validateMessages(body.messages, betas.has(MID_CONVERSATION_SYSTEM_BETA));
}

/** Field names, model, max_tokens (not when counting), messages present, system. */
function validatePromptFields(body: any, betas: Set<string>, { countOnly }: { countOnly: boolean }): void {
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new InvalidRequest("There was an error parsing the body of your request.");
  for (const key of Object.keys(body)) {
    const notForCounting = countOnly && ["max_tokens", "stream", "metadata", "stop_sequences", "temperature", "top_p", "top_k", "service_tier"].includes(key);
    if (!allowedField(key, betas) || notForCounting) throw new InvalidRequest(`${key}: Extra inputs are not permitted`);
  }
  if (typeof body.model !== "string" || !body.model) throw new InvalidRequest("model: Field required");
  if (!countOnly) validateMaxTokens(body);
  if (!Array.isArray(body.messages)) throw new InvalidRequest("messages: Field required");
  if (body.messages.length === 0) throw new InvalidRequest("messages: at least one message is required");
  if (
    body.system !== undefined &&
    typeof body.system !== "string" &&
    !(Array.isArray(body.system) && body.system.every((block: any) => block?.type === "text" && typeof block.text === "string"))
  ) {
    throw new InvalidRequest("system: Input should be a valid string or a list of text blocks");
  }
}

function validateTools(body: any): void {
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) throw new InvalidRequest("tools: Input should be a valid list");
    body.tools.forEach((tool: any, index: number) => {
      if (typeof tool?.name !== "string") throw new InvalidRequest(`tools.${index}.custom.name: Field required`);
      if (tool.input_schema?.type !== "object") throw new InvalidRequest(`tools.${index}.custom.input_schema.type: Input should be 'object'`);
    });
  }
  if (body.tool_choice !== undefined && body.tools === undefined)
    throw new InvalidRequest("tool_choice: tool_choice may only be specified while providing tools.");
  if (body.tool_choice?.type === "tool" && !body.tools.some((tool: any) => tool?.name === body.tool_choice.name))
    throw new InvalidRequest(`tool_choice.name: Tool '${String(body.tool_choice.name)}' not found in tools.`);
}

function validateMaxTokens(body: any): void {
  if (body.max_tokens === undefined) throw new InvalidRequest("max_tokens: Field required");
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 0) throw new InvalidRequest("max_tokens: Input should be a valid integer");
}

function validateSampling(body: any, fixedSampling: RegExp): void {
  const fixed = fixedSampling.test(body.model);
  if (body.temperature !== undefined) {
    if (typeof body.temperature !== "number" || body.temperature < 0 || body.temperature > 1)
      throw new InvalidRequest("temperature: Input should be less than or equal to 1");
    if (fixed && body.temperature !== 1) throw new InvalidRequest(`temperature: only 1.0 is supported for ${body.model}`);
  }
  if (body.top_p !== undefined && fixed && body.top_p < 0.99) throw new InvalidRequest(`top_p: values below 0.99 are not supported for ${body.model}`);
  if (body.top_k !== undefined && fixed) throw new InvalidRequest(`top_k: not supported for ${body.model}`);
  if (body.temperature !== undefined && body.top_p !== undefined && /^claude-(?:opus|sonnet|haiku)-\d/.test(body.model)) {
    throw new InvalidRequest("`temperature` and `top_p` cannot both be specified for this model. Please use only one.");
  }
}

/** Extended thinking's rules (reference: the `thinking` field): budget, sampling, forced tools, and the signed block before tool calls. */
function validateThinking(body: any): void {
  const thinking = body.thinking;
  if (thinking === undefined || thinking?.type === "disabled") return;
  if (thinking?.type === "adaptive") return; // the model decides its budget (model-dependent; the fake takes it from any model)
  if (thinking?.type !== "enabled") throw new InvalidRequest("thinking.type: Input should be 'enabled', 'disabled' or 'adaptive'");
  if (!Number.isInteger(thinking.budget_tokens) || thinking.budget_tokens < 1024)
    throw new InvalidRequest("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
  if (thinking.budget_tokens >= body.max_tokens) throw new InvalidRequest("`max_tokens` must be greater than `thinking.budget_tokens`.");
  if (body.temperature !== undefined && body.temperature !== 1)
    throw new InvalidRequest("`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation.");
  if (body.top_k !== undefined) throw new InvalidRequest("`top_k` must be unset when thinking is enabled. Please consult our documentation.");
  if (body.top_p !== undefined && body.top_p < 0.95)
    throw new InvalidRequest("`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled.");
  if (body.tool_choice?.type === "any" || body.tool_choice?.type === "tool")
    throw new InvalidRequest("Thinking may not be enabled when tool_choice forces tool use.");
  const lastAssistant = [...body.messages].reverse().find((message: any) => message?.role === "assistant");
  const blocks = Array.isArray(lastAssistant?.content) ? lastAssistant.content : [];
  if (blocks.some((block: any) => block?.type === "tool_use") && blocks[0]?.type !== "thinking" && blocks[0]?.type !== "redacted_thinking") {
    throw new InvalidRequest(
      "messages: When `thinking` is enabled, a final `assistant` message must start with a thinking block. We recommend you include thinking blocks from previous turns.",
    );
  }
}

/** With the mid-conversation-system beta a system message may sit between turns; the turns around it are checked as if it were not there. */
function validateMessages(messages: any[], systemMessages = false): void {
  let pendingToolUses: string[] = [];
  let previousRole: string | undefined;
  messages.forEach((message, index) => {
    const role = message?.role;
    if (role === "system" && systemMessages && index > 0) {
      validateSystemMessage(message, index);
      previousRole = undefined; // the turns on either side of it may share a role
      return;
    }
    if (role !== "user" && role !== "assistant") throw new InvalidRequest(`messages.${index}.role: Input should be 'user' or 'assistant'`);
    if (index === 0 && role !== "user") throw new InvalidRequest('messages: first message must use the "user" role');
    const repeated = previousRole === role;
    previousRole = role;
    if (repeated) {
      throw new InvalidRequest(`messages: roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row`);
    }
    const final = index === messages.length - 1;
    const content = message.content;
    if (typeof content === "string") {
      if (!content && !(final && role === "assistant"))
        throw new InvalidRequest(`messages.${index}: all messages must have non-empty content except for the optional final assistant message`);
    } else if (!Array.isArray(content) || (content.length === 0 && !(final && role === "assistant"))) {
      throw new InvalidRequest(`messages.${index}: all messages must have non-empty content except for the optional final assistant message`);
    }
    const blocks: any[] = typeof content === "string" ? [{ type: "text", text: content }] : content;
    blocks.forEach((block, blockIndex) => {
      validateBlock(block, role, `messages.${index}.content.${blockIndex}`);
    });
    if (pendingToolUses.length > 0) {
      const leading = blocks.slice(0, pendingToolUses.length);
      const answered = leading.filter((block) => block?.type === "tool_result").map((block) => block.tool_use_id);
      if (answered.length !== pendingToolUses.length || pendingToolUses.some((id) => !answered.includes(id))) {
        throw new InvalidRequest(
          `messages.${index}: Did not find ${pendingToolUses.length} tool_result block(s) at the beginning of this message. Messages following tool_use blocks must begin with a matching number of tool_result blocks.`,
        );
      }
    } else {
      const stray = blocks.findIndex((block) => block?.type === "tool_result");
      if (stray >= 0) {
        throw new InvalidRequest(
          `messages.${index}.content.${stray}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${blocks[stray].tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      }
    }
    pendingToolUses = role === "assistant" ? blocks.filter((block) => block?.type === "tool_use").map((block) => block.id) : [];
    if (final && pendingToolUses.length > 0)
      throw new InvalidRequest(`messages.${index}: tool_use ids were found without tool_result blocks immediately after`);
    if (final && role === "assistant") {
      const last = blocks.at(-1);
      if (last?.type === "text" && /\s$/.test(last.text)) throw new InvalidRequest("messages: final assistant content cannot end with trailing whitespace");
    }
  });
}

function validateSystemMessage(message: any, index: number): void {
  const content = message.content;
  const text = typeof content === "string" ? content : Array.isArray(content) ? content : undefined;
  if (text === undefined || text.length === 0)
    throw new InvalidRequest(`messages.${index}: all messages must have non-empty content except for the optional final assistant message`);
  if (Array.isArray(content) && content.some((block: any) => block?.type !== "text" || typeof block.text !== "string" || !block.text)) {
    throw new InvalidRequest(`messages.${index}.content: system messages take non-empty text blocks`);
  }
}

function validateBlock(block: any, role: string, path: string): void {
  switch (block?.type) {
    case "text":
      if (typeof block.text !== "string" || block.text.length === 0) throw new InvalidRequest("messages: text content blocks must be non-empty");
      return;
    case "image": {
      const source = block.source;
      if (source?.type === "base64") {
        if (!IMAGE_TYPES.has(source.media_type))
          throw new InvalidRequest(`${path}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`);
        if (typeof source.data !== "string" || !source.data) throw new InvalidRequest(`${path}.image.source.base64.data: Field required`);
      } else if (source?.type === "url") {
        if (typeof source.url !== "string" || !/^https?:\/\//.test(source.url))
          throw new InvalidRequest(`${path}.image.source.url.url: Input should be a valid URL`);
      } else
        throw new InvalidRequest(
          `${path}.image.source: Input tag '${String(source?.type)}' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'`,
        );
      return;
    }
    case "tool_use":
      if (role !== "assistant") throw new InvalidRequest(`${path}: tool_use blocks are only allowed in assistant messages`);
      if (typeof block.id !== "string" || typeof block.name !== "string" || !block.input || typeof block.input !== "object" || Array.isArray(block.input)) {
        throw new InvalidRequest(`${path}.tool_use.input: Input should be a valid dictionary`);
      }
      return;
    case "tool_result":
      if (role !== "user") throw new InvalidRequest(`${path}: tool_result blocks are only allowed in user messages`);
      if (block.content === "") throw new InvalidRequest("messages: text content blocks must be non-empty");
      return;
    case "thinking":
    case "redacted_thinking":
    case "document":
      return;
    default:
      throw new InvalidRequest(`${path}: Input tag '${String(block?.type)}' found using 'type' does not match any of the expected tags`);
  }
}

interface StreamEvent {
  event: string;
  data: Record<string, unknown>;
  content: boolean; // counts towards dropAfterChunks / streamError.afterChunks
}

function replyBlocks(b: AnthropicFakeBehaviour, text: string | null): any[] {
  const blocks: any[] = [];
  if (b.thinking) blocks.push({ type: "thinking", thinking: b.thinking, signature: "sig_fake" });
  if (text !== null && text !== "") blocks.push({ type: "text", text });
  for (const tool of b.toolUses ?? []) blocks.push({ type: "tool_use", id: tool.id, name: tool.name, input: tool.input });
  return blocks;
}

function streamEvents(message: any, blocks: any[], outputTokens: number | undefined): StreamEvent[] {
  const events: StreamEvent[] = [];
  const start = { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 1 } };
  events.push({ event: "message_start", data: { type: "message_start", message: start }, content: false });
  blocks.forEach((block, index) => {
    const empty =
      block.type === "text"
        ? { type: "text", text: "" }
        : block.type === "thinking"
          ? { type: "thinking", thinking: "", signature: "" }
          : { ...block, input: {} };
    events.push({ event: "content_block_start", data: { type: "content_block_start", index, content_block: empty }, content: false });
    if (index === 0) events.push({ event: "ping", data: { type: "ping" }, content: false });
    const delta = (value: Record<string, unknown>) =>
      events.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: value }, content: true });
    if (block.type === "text") for (const piece of pieces(block.text)) delta({ type: "text_delta", text: piece });
    if (block.type === "thinking") {
      delta({ type: "thinking_delta", thinking: block.thinking });
      delta({ type: "signature_delta", signature: block.signature });
    }
    if (block.type === "tool_use") {
      delta({ type: "input_json_delta", partial_json: "" });
      for (const fragment of fragments(JSON.stringify(block.input))) delta({ type: "input_json_delta", partial_json: fragment });
    }
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index }, content: false });
  });
  events.push({
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: outputTokens === undefined ? {} : { output_tokens: outputTokens },
    },
    content: false,
  });
  events.push({ event: "message_stop", data: { type: "message_stop" }, content: false });
  return events;
}

export function startFakeAnthropic(initial: AnthropicFakeBehaviour = {}, options: AnthropicFakeOptions = {}): Promise<FakeAnthropic> {
  const fixedSampling = options.fixedSamplingModels ?? DEFAULT_FIXED_SAMPLING;
  const requests: RecordedRequest[] = [];
  const queue: AnthropicFakeBehaviour[] = [];
  let persistent: AnthropicFakeBehaviour = { ...initial };
  let active = 0;
  let abortedCount = 0;
  let counter = 0;
  let closing = false;

  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, errorBody(500, `fake upstream crashed: ${String(error)}`));
      else response.destroy();
    });
  });

  function sendJson(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    response.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
    response.end(text);
  }

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    counter += 1;
    const requestId = `req_fake_${counter}`;
    response.setHeader("request-id", requestId);
    let serverDropped = false;
    const closed = new AbortController();
    response.on("close", () => {
      closed.abort();
      if (!response.writableEnded && !serverDropped && !closing) abortedCount += 1;
    });
    const drop = () => {
      serverDropped = true;
      request.socket.destroy();
    };

    const raw = await readBody(request);
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const method = request.method ?? "GET";
    let body: any;
    let parsed = true;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
      parsed = false;
    }
    requests.push({ method, path: url.pathname, headers: { ...request.headers }, body });
    if (closed.signal.aborted) return;

    if (!request.headers["x-api-key"]) return sendJson(response, 401, errorBody(401, "x-api-key header is required", requestId));
    if (!request.headers["anthropic-version"]) return sendJson(response, 400, errorBody(400, "anthropic-version: header is required", requestId));
    if (method === "GET" && url.pathname === "/v1/models") {
      return sendJson(response, 200, { data: MODELS, has_more: false, first_id: MODELS[0]!.id, last_id: MODELS.at(-1)!.id });
    }
    const counting = method === "POST" && url.pathname === "/v1/messages/count_tokens";
    if (!counting && (method !== "POST" || url.pathname !== "/v1/messages"))
      return sendJson(response, 404, errorBody(404, `Not found: ${method} ${url.pathname}`, requestId));

    const b = queue.length > 0 ? queue.shift()! : persistent;
    if (counting) {
      if (b.status !== undefined && b.status !== 200) return sendJson(response, b.status, b.errorBody ?? errorBody(b.status, undefined, requestId));
      try {
        if (!parsed) throw new InvalidRequest("There was an error parsing the body of your request.");
        validateCount(body, betasOf(request));
      } catch (error) {
        if (error instanceof InvalidRequest) return sendJson(response, 400, errorBody(400, error.message, requestId));
        throw error;
      }
      return sendJson(response, 200, { input_tokens: b.usage?.input_tokens ?? promptTokens(body) });
    }
    if (b.firstByteDelayMs) {
      await sleep(b.firstByteDelayMs, closed.signal);
      if (closed.signal.aborted) return;
    }
    if (b.dropConnection) return drop();
    const errorHeaders: Record<string, string> = b.retryAfter !== undefined ? { "retry-after": b.retryAfter } : {};
    if (b.status !== undefined && b.status !== 200) return sendJson(response, b.status, b.errorBody ?? errorBody(b.status, undefined, requestId), errorHeaders);
    try {
      if (!parsed) throw new InvalidRequest("There was an error parsing the body of your request.");
      validate(body, fixedSampling, betasOf(request));
    } catch (error) {
      if (error instanceof InvalidRequest) return sendJson(response, 400, errorBody(400, error.message, requestId));
      throw error;
    }

    const userTurns = body.messages.filter((message: any) => message.role === "user");
    const text = b.writeToMaxTokens
      ? Array.from({ length: body.max_tokens }, () => "tok").join(" ")
      : b.content !== undefined
        ? b.content
        : b.toolUses?.length
          ? null
          : `echo: ${textOfBlocks(userTurns.at(-1)?.content)}`;
    const blocks = replyBlocks(b, text);
    const computedOutput = Math.max(
      1,
      pieces(text ?? "").length + (b.toolUses ?? []).reduce((sum, tool) => sum + 1 + fragments(JSON.stringify(tool.input)).length, 0),
    );
    const usage: { input_tokens: number; output_tokens?: number; cache_creation_input_tokens: number; cache_read_input_tokens: number } = {
      input_tokens: b.usage?.input_tokens ?? promptTokens(body),
      output_tokens: b.usage?.output_tokens ?? computedOutput,
      cache_creation_input_tokens: b.usage?.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: b.usage?.cache_read_input_tokens ?? 0,
    };
    if (b.omitOutputTokens) delete usage.output_tokens;
    const message = {
      id: `msg_fake_${counter}`,
      type: "message",
      role: "assistant",
      model: body.model,
      content: blocks,
      stop_reason: b.stopReason ?? (b.toolUses?.length ? "tool_use" : "end_turn"),
      stop_sequence: null,
      usage,
    };
    if (body.stream !== true) return b.pacing ? sendPaced(response, "application/json", JSON.stringify(message), b.pacing) : sendJson(response, 200, message);
    if (b.rawEvents !== undefined) {
      response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
      response.end(b.rawEvents.map(({ event, data }) => `${event === undefined ? "" : `event: ${event}\n`}data: ${data}\n\n`).join(""));
      return;
    }

    response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
    response.flushHeaders();
    active += 1;
    let counted = true;
    const release = () => {
      if (counted) {
        counted = false;
        active -= 1;
      }
    };
    response.on("close", release);
    const write = (text: string): Promise<void> =>
      new Promise((resolve) => {
        if (response.destroyed || closed.signal.aborted) return resolve();
        response.write(text, () => resolve());
      });
    const events = streamEvents(message, blocks, usage.output_tokens);
    if (b.endless) {
      for (const event of events.slice(0, 2)) await write(`event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`);
      const delta = { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "x".repeat(1024) } };
      return writeEndlessEvents(response, () => `event: content_block_delta\ndata: ${JSON.stringify(delta)}\n\n`, b.endless);
    }
    let written = 0;
    for (const [index, event] of events.entries()) {
      if (event.content && b.dropAfterChunks !== undefined && written >= b.dropAfterChunks) return drop();
      if (event.content && b.streamError && written >= (b.streamError.afterChunks ?? 0)) {
        const error = { type: "error", error: { type: b.streamError.type, message: b.streamError.message } };
        await write(`event: error\ndata: ${JSON.stringify(error)}\n\n`);
        response.end();
        return release();
      }
      if (index > 0 && b.chunkDelayMs) await sleep(b.chunkDelayMs, closed.signal);
      if (closed.signal.aborted) return;
      await write(`event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`);
      if (event.content) written += 1;
    }
    response.end();
    release();
  }

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      const port = (server.address() as AddressInfo).port;
      resolve({
        url: `http://127.0.0.1:${port}`,
        port,
        requests,
        set(behaviour) {
          persistent = { ...behaviour };
        },
        enqueue(...behaviours) {
          queue.push(...behaviours.map((behaviour) => ({ ...behaviour })));
        },
        reset() {
          requests.length = 0;
          queue.length = 0;
          persistent = {};
        },
        activeStreams: () => active,
        aborted: () => abortedCount,
        close() {
          closing = true;
          return new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          });
        },
      });
    });
  });
}
