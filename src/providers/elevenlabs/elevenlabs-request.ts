// One call to ElevenLabs' API: its origin, the `xi-api-key` header, and its errors in the OpenAI
// envelope. Shared by speech and the voice list.

import { toNetworkError, type UpstreamResponse, upstreamTarget } from "../../net/upstream-http.js";
import type { ProviderContext } from "../provider.js";
import { UpstreamHttpError, UpstreamNetworkError } from "../provider-errors.js";
import { fromElevenLabsHttpError } from "./elevenlabs-error.js";

export interface ElevenLabsCall {
  method: "GET" | "POST";
  /** From the API origin, with its query (`/v1/voices`). */
  path: string;
  body?: string;
  signal: AbortSignal;
}

export type ElevenLabsRequest = (call: ElevenLabsCall) => Promise<UpstreamResponse>;

export function elevenLabsRequest(context: ProviderContext): ElevenLabsRequest {
  // The API origin; a base URL ending in /v1 works too.
  const { origin, path: basePath } = upstreamTarget((context.config.baseUrl ?? "https://api.elevenlabs.io").replace(/\/+$/, "").replace(/\/v1$/, ""));
  const prefix = basePath.replace(/\/+$/, "");
  const headers: Record<string, string> = { ...context.config.headers };
  if (context.config.apiKey) headers["xi-api-key"] = context.config.apiKey;

  return async ({ method, path, body, signal }) => {
    const callHeaders = body === undefined ? headers : { ...headers, "content-type": "application/json" };
    try {
      return await context.http.send(
        {
          provider: context.name,
          target: { origin, path: `${prefix}${path}` },
          method,
          headers: callHeaders,
          body,
          signal,
          answer: "audio",
          redact: context.redact,
        },
        context.upstream,
      );
    } catch (error) {
      throw error instanceof UpstreamHttpError ? fromElevenLabsHttpError(error) : error;
    }
  };
}

/** The audio of a 200; none (empty, or a JSON body from a proxy) is the upstream's fault. */
export async function readElevenLabsAudio(provider: string, response: UpstreamResponse, signal: AbortSignal): Promise<Buffer> {
  let bytes: Buffer;
  try {
    bytes = await response.body.bytes();
  } catch (error) {
    throw toNetworkError(provider, error, signal);
  }
  if (bytes.length === 0) throw new UpstreamNetworkError(provider, "invalid_response", "the answer holds no audio");
  const contentType = String(response.headers["content-type"] ?? "").toLowerCase();
  if (contentType.startsWith("application/json")) throw new UpstreamNetworkError(provider, "invalid_response", "the answer is JSON, not audio");
  return bytes;
}
