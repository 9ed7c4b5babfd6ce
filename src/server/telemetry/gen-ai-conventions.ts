// The OpenTelemetry GenAI semantic conventions gw's spans follow (`gen_ai.*`). They are still
// "development" in the conventions, so their names are copied here, as the semantic-conventions
// package advises for incubating names, rather than imported from its `incubating` entry point,
// whose names may change in any minor release. Plus gw's own attributes (`gw.*`).

export const GEN_AI = {
  operation: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  requestStream: "gen_ai.request.stream",
  responseModel: "gen_ai.response.model",
  outputType: "gen_ai.output.type",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  cacheCreationTokens: "gen_ai.usage.cache_creation.input_tokens",
  inputMessages: "gen_ai.input.messages",
  systemInstructions: "gen_ai.system_instructions",
} as const;

export const GW = {
  requestId: "gw.request_id",
  agent: "gw.agent",
  keyPrefix: "gw.key_prefix",
  credits: "gw.credits",
  attempts: "gw.attempts",
  cache: "gw.cache",
  /** The provider's name in gw's config (gen_ai.provider.name is its vendor). */
  provider: "gw.provider",
  attemptOutcome: "gw.attempt.outcome",
  attemptCause: "gw.attempt.cause",
  /** The client went away before the whole answer was written. */
  clientGone: "gw.client_gone",
  /** A usage unit that is not a token count (`gw.units.images`, `gw.units.characters` ...). */
  unitsPrefix: "gw.units.",
} as const;

/** The GenAI operations gw's endpoints are (the conventions' well-known values). */
export type GenAiOperation = "chat" | "embeddings" | "generate_content" | "retrieval";

interface OperationOfPath {
  operation: GenAiOperation;
  /** What it answers, when not text (gen_ai.output.type). */
  outputType?: "image" | "speech";
}

/**
 * The operation a request is, by its endpoint; none for the endpoints whose calls are no single
 * GenAI operation (MCP's tools, batches) or call no model (keys, storage, health ...). Used only
 * for a request that called a model: a GET of the voices is a plain HTTP span.
 */
export function operationOfPath(path: string): OperationOfPath | undefined {
  if (CHAT_PATHS.has(path)) return { operation: "chat" };
  if (path === "/v1/embeddings") return { operation: "embeddings" };
  if (path === "/v1/audio/speech" || path === "/v1/audio/synthesize") return { operation: "generate_content", outputType: "speech" };
  if (path.startsWith("/v1/image/") || path.startsWith("/v1/images/")) return { operation: "generate_content", outputType: "image" };
  if (path.startsWith("/v1/audio/") || path.startsWith("/v1/video/")) return { operation: "generate_content" };
  if (path === "/v1/search") return { operation: "retrieval" };
  return undefined;
}

/** The chat-style endpoints, describing a picture with a chat model included. */
const CHAT_PATHS = new Set(["/v1/chat/completions", "/v1/responses", "/anthropic/v1/messages", "/v1/image/describe", "/v1/vision/describe"]);

/**
 * gen_ai.provider.name for a provider type: the conventions' name for the vendor it speaks to.
 * An `openai` provider is any OpenAI-compatible server: the conventions name it `openai` too
 * (server.address tells which), as they do for an OpenAI client.
 */
export function providerNameOf(type: string): string {
  return type === "gemini" ? "gcp.gemini" : type;
}

/** A usage row's units as attributes: the token counts by the conventions' names, anything else as gw.units.*. */
export function unitAttributes(units: Readonly<Record<string, number>>): Record<string, number> {
  const attributes: Record<string, number> = {};
  for (const [name, count] of Object.entries(units)) {
    const key = TOKEN_UNITS[name] ?? `${GW.unitsPrefix}${name}`;
    attributes[key] = (attributes[key] ?? 0) + count;
  }
  return attributes;
}

/** gw's token units (chat's prompt/completion, the messages endpoint's and embeddings' input/output) by convention name. */
const TOKEN_UNITS: Record<string, string> = {
  prompt_tokens: GEN_AI.inputTokens,
  input_tokens: GEN_AI.inputTokens,
  completion_tokens: GEN_AI.outputTokens,
  output_tokens: GEN_AI.outputTokens,
  cached_tokens: GEN_AI.cacheReadTokens,
  cache_write_tokens: GEN_AI.cacheCreationTokens,
};
