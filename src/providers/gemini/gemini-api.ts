// Gemini wire shapes (https://ai.google.dev/api/generate-content, https://ai.google.dev/api/embeddings), lowerCamelCase as on
// the wire. Requests are typed as we build them; responses only as far as we read them, all
// optional; error bodies and embeddings as lenient schemas.
import { z } from "zod";
import { anyText, lenient, lenientList } from "../upstream-schema.js";

/** Where the Gemini Developer API is, with its version. */
export const GEMINI_BASE_URL = "https://generativelanguage.googleapis.com/v1beta";

/**
 * A Google RPC error body, or an error chunk inside a stream: {error: {code, message, status, details}}
 * (https://ai.google.dev/gemini-api/docs/troubleshooting). `details` holds google.rpc.ErrorInfo's
 * `reason` and google.rpc.RetryInfo's `retryDelay`.
 */
export const GoogleErrorBody = z.object({
  error: z.object({
    code: lenient(z.number()),
    message: anyText,
    status: anyText,
    details: lenientList(z.looseObject({ "@type": lenient(z.unknown()), reason: anyText, retryDelay: anyText })),
  }),
});
export type GoogleErrorDetail = NonNullable<z.output<typeof GoogleErrorBody>["error"]["details"]>[number];

/** One ContentEmbedding: its values, checked by embedding-vectors.ts. */
const ContentEmbedding = z.object({ values: lenient(z.unknown()) }).catch({});

/** embedContent's answer. */
export const GeminiEmbedAnswer = z.object({ embedding: lenient(ContentEmbedding) });

/** batchEmbedContents' answer: one embedding per request, in order. */
export const GeminiBatchEmbedAnswer = z.object({ embeddings: lenient(z.array(ContentEmbedding)) });

export type GeminiPart =
  | { text: string; thought?: boolean; thoughtSignature?: string }
  | { inlineData: { mimeType: string; data: string } }
  | { functionCall: { name: string; args: Record<string, unknown> }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: Record<string, unknown> } };

export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseJsonSchema?: unknown;
  thinkingConfig?: GeminiThinkingConfig;
}

/** Gemini 2.5's token budget (0 turns thinking off, -1 lets the model choose); Gemini 3 takes it too, instead of its thinkingLevel. */
export interface GeminiThinkingConfig {
  thinkingBudget?: number;
  includeThoughts?: boolean;
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parametersJsonSchema?: Record<string, unknown>;
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  generationConfig?: GeminiGenerationConfig;
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: { functionCallingConfig: { mode: "AUTO" | "ANY" | "NONE"; allowedFunctionNames?: string[] } };
}

export interface GeminiResponsePart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { name?: string; args?: unknown; id?: string };
}

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiResponsePart[] };
  finishReason?: string;
  index?: number;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  error?: unknown;
}
