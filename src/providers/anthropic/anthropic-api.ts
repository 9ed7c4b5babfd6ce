// Anthropic Messages wire shapes (https://platform.claude.com/docs/en/api/messages). Requests are typed as we
// build them; responses and stream events only as far as we read them, every field optional; error
// bodies as a lenient schema.
import { z } from "zod";
import { anyText, lenient } from "../upstream-schema.js";

/** Where Anthropic's API is: the origin, every path under /v1. */
export const ANTHROPIC_BASE_URL = "https://api.anthropic.com";

/** The API version every request names (`anthropic-version`), unless the client names its own. */
export const ANTHROPIC_VERSION = "2023-06-01";

/** An error body, or an `error` stream event: {type: "error", error: {type, message}} (https://platform.claude.com/docs/en/api/errors). */
export const AnthropicErrorBody = z.object({ error: lenient(z.object({ type: anyText, message: anyText })) });

export type AnthropicImageSource = { type: "base64"; media_type: string; data: string } | { type: "url"; url: string };

export type AnthropicContentBlock =
  | { type: "text"; text: string }
  | { type: "image"; source: AnthropicImageSource }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "tool_result"; tool_use_id: string; content?: string; is_error?: boolean };

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicContentBlock[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

export type AnthropicToolChoice =
  | { type: "auto" | "any" | "none"; disable_parallel_tool_use?: boolean }
  | { type: "tool"; name: string; disable_parallel_tool_use?: boolean };

export interface AnthropicMessagesRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: string;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  metadata?: { user_id: string };
  thinking?: AnthropicThinking;
  stream?: boolean;
}

/** Extended thinking: `budget_tokens` at least 1024 and below max_tokens. */
export interface AnthropicThinking {
  type: "enabled";
  budget_tokens: number;
}

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

export interface AnthropicResponseBlock {
  type?: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

export interface AnthropicMessageResponse {
  id?: string;
  model?: string;
  content?: AnthropicResponseBlock[];
  stop_reason?: string | null;
  usage?: AnthropicUsage;
}

export interface AnthropicStreamEvent {
  type?: string;
  message?: AnthropicMessageResponse;
  index?: number;
  content_block?: AnthropicResponseBlock;
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}
