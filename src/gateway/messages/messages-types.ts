// The Anthropic Messages shapes the /anthropic/v1/messages endpoint speaks (https://platform.claude.com/docs/en/api/messages,
// stream events: https://platform.claude.com/docs/en/build-with-claude/streaming), as far as the converters read or write them.

export type MessagesJson = Record<string, unknown>;

export interface MessagesTextBlock {
  type: "text";
  text: string;
  [extra: string]: unknown;
}

/** An inbound content block; only `type` is fixed, the rest is read per type. */
export interface MessagesInputBlock {
  type: string;
  [field: string]: unknown;
}

export interface MessagesMessage {
  role: "user" | "assistant";
  content: string | MessagesInputBlock[];
}

/**
 * A system message between turns (Anthropic's mid-conversation-system beta): instructions from
 * this point on. `clear_at: "next_user_message"` shows it only until a later user turn exists.
 */
export interface MessagesSystemMessage {
  role: "system";
  content?: string | MessagesInputBlock[];
  clear_at?: "next_user_message" | "never" | null;
  [extra: string]: unknown;
}

export interface MessagesTool {
  name: string;
  description?: string;
  input_schema?: MessagesJson;
  /** Server tools (web_search_20250305 ...) name a type; client tools name none or "custom". */
  type?: string;
  [extra: string]: unknown;
}

/** A Messages request without its output cap, as it goes upstream (the provider writes the cap reserved for). */
export interface UncappedMessagesRequest {
  model: string;
  messages: Array<MessagesMessage | MessagesSystemMessage>;
  system?: string | MessagesTextBlock[];
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  tools?: MessagesTool[];
  tool_choice?: { type: string; name?: string; disable_parallel_tool_use?: boolean };
  stream?: boolean;
  metadata?: MessagesJson;
  [extra: string]: unknown;
}

export interface MessagesRequest extends UncappedMessagesRequest {
  max_tokens: number;
}

/** POST /anthropic/v1/messages/count_tokens: a prompt (model, messages, system, tools ...), no max_tokens. */
export type CountTokensRequest = UncappedMessagesRequest;

export type MessagesOutputBlock = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: MessagesJson };

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal";

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface MessagesResponse {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: MessagesOutputBlock[];
  stop_reason: StopReason;
  stop_sequence: string | null;
  usage: MessagesUsage;
}

/** One server-sent event of the native stream: `event: <event>` and `data: <JSON of data>`. */
export interface MessagesStreamEvent {
  event: string;
  data: MessagesJson;
}
