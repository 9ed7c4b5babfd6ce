// Shapes of the gateway's chat and model endpoints as the client sends and reads them, derived
// from the server's own schema and answer types (type imports only: erased, so the client never
// loads the gateway; docs/decisions.md §1). A server change the client does not follow fails tsc.
import type { z } from "zod";
import type { chatRequestSchema } from "../gateway/chat/chat-request.js";
import type { ChatCompletionBody, ChatCompletionChunkBody, ChatUsageBody } from "../gateway/chat/chat-service.js";
import type { Modality as ServerModality, ModelEntry as ServerModelEntry, ModelList as ServerModelList } from "../gateway/models/model-list.js";

export type Modality = ServerModality;

export type ModelEntry = ServerModelEntry;

export type ModelList = ServerModelList;

/** What a client may send to POST /v1/chat/completions (other OpenAI parameters are forwarded as sent). */
export type ChatCompletionRequest = z.input<typeof chatRequestSchema>;

/** One request message: system, developer, user, assistant or tool, as the server's schema takes it. */
export type ChatMessage = ChatCompletionRequest["messages"][number];

export type Usage = ChatUsageBody;

/** A message in an answer: OpenAI's shape, which every provider speaks and the gateway relays. */
export interface ChatAnswerMessage {
  role: string;
  content: string | null;
  [field: string]: unknown;
}

/**
 * The server's completion type (what the gateway itself guarantees: id, model, choices, usage)
 * with the OpenAI fields the gateway relays as the provider wrote them.
 */
export type ChatCompletion = ChatCompletionBody & {
  object: "chat.completion";
  created: number;
  choices: Array<{ index: number; message: ChatAnswerMessage; finish_reason: string | null }>;
};

/** The server's chunk type (stream-relay.ts) with the OpenAI fields every relayed chunk carries. */
export type ChatCompletionChunk = ChatCompletionChunkBody & {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: Array<{ index: number; delta: { role?: string; content?: string | null; [field: string]: unknown }; finish_reason: string | null }>;
};
