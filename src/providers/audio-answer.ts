// What the speech adapters require of a 200: audio. None (empty, or a JSON body from a proxy) is
// the upstream's fault, reported as an invalid response the gateway retries and falls back from.
import type { UpstreamResponse } from "../net/upstream-http.js";
import { bareMediaType } from "./image-bytes.js";
import { UpstreamNetworkError } from "./provider-errors.js";

export function requireAudio(provider: string, bytes: Buffer, response: Pick<UpstreamResponse, "headers">): Buffer {
  if (bytes.length === 0) throw new UpstreamNetworkError(provider, "invalid_response", "the answer holds no audio");
  if (bareMediaType(response.headers["content-type"]) === "application/json") {
    throw new UpstreamNetworkError(provider, "invalid_response", "the answer is JSON, not audio");
  }
  return bytes;
}
