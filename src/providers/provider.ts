// What a provider type is: a factory that, given its config entry, offers capabilities.
// Capabilities are small separate interfaces; a vendor implements only the ones it has.

import type { ProviderConfig, UpstreamSettings } from "../config/config-schema.js";
import type { UrlFetcher } from "../net/safe-fetch.js";
import type { Redact } from "../net/secret-redaction.js";
import type { UpstreamHttp } from "../net/upstream-http.js";
import type { SpeechCapability, TranscriptionCapability } from "./audio-types.js";
import type { ChatCapability } from "./chat-types.js";
import type { EmbeddingCapability } from "./embedding-types.js";
import type { ImageCapability } from "./image-types.js";
import type { MessagesCapability } from "./messages-types.js";
import type { ResponsesCapability } from "./responses-types.js";
import type { SearchCapability } from "./search-types.js";
import type { VideoCapability } from "./video-types.js";

export interface ProviderContext {
  /** The provider's name in the config (`openai`, `groq` ...). */
  name: string;
  config: ProviderConfig;
  upstream: UpstreamSettings;
  http: UpstreamHttp;
  /** Removes this provider's key and configured header values from upstream text (every error, chat answers and events). */
  redact: Redact;
  /** For what the provider skips rather than fails on (a malformed stream line). */
  warn: (message: string) => void;
  /** Settings of the local engines from the config (video renders at once). */
  engines?: { videoConcurrency: number };
  /**
   * Fetches a URL a caller gave (a chat picture the vendor cannot take by URL) through the
   * gateway's SSRF guard: private and internal addresses refused, size and time capped.
   */
  fetchUrl?: UrlFetcher;
}

export interface Provider {
  name: string;
  type: string;
  chat?: ChatCapability;
  /** Anthropic's Messages API natively (the messages endpoint passes requests through). */
  messages?: MessagesCapability;
  /** OpenAI's Responses API natively (POST /v1/responses passes requests through). */
  responses?: ResponsesCapability;
  /** Image generation, editing, upscaling, background removal (each where the vendor has it). */
  images?: ImageCapability;
  /** Speech to text. */
  transcription?: TranscriptionCapability;
  /** Text to speech, and the voices it speaks. */
  speech?: SpeechCapability;
  /** Web search. */
  search?: SearchCapability;
  /** Asynchronous video generation jobs. */
  video?: VideoCapability;
  /** Text embeddings (vectors for search and clustering). */
  embeddings?: EmbeddingCapability;
}

export interface ProviderDefinition {
  type: string;
  /** Capability names, for `gw providers list` and catalogs. */
  capabilities: readonly string[];
  create(context: ProviderContext): Provider;
}

export function defineProvider(definition: ProviderDefinition): ProviderDefinition {
  return definition;
}
