// Shapes of the gateway's answers, as the client reads them. Fields the server may add later
// are allowed; only what callers use is named.

export type Modality = "text" | "image" | "file" | "audio" | "video";

export interface ModelEntry {
  id: string;
  name: string;
  context_length: number;
  created: number;
  architecture: { input_modalities: string[]; output_modalities: string[] };
  [field: string]: unknown;
}

export interface ModelList {
  object: "list";
  data: ModelEntry[];
}

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool" | (string & {});
  content: string | null;
  [field: string]: unknown;
}

export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  max_tokens?: number;
  [field: string]: unknown;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: Array<{ index: number; message: ChatMessage; finish_reason: string | null }>;
  usage?: Usage;
  [field: string]: unknown;
}

export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: Array<{ index: number; delta: { role?: string; content?: string | null; [field: string]: unknown }; finish_reason: string | null }>;
  usage?: Usage | null;
  [field: string]: unknown;
}
