// A Stability v2beta success (https://platform.stability.ai/docs/api-reference) -> one picture or a refusal. Asked with
// `accept: image/*`, the body is the picture itself and the metadata is in headers; a JSON
// answer ({image, finish_reason, seed}) is read too, in case a proxy asked for it.

import { parseJson } from "../../json/json-values.js";
import { bareMediaType, sniffImageMediaType } from "../image-bytes.js";
import type { ImageResult } from "../image-types.js";
import { UpstreamNetworkError } from "../provider-errors.js";
import { readAs } from "../upstream-schema.js";
import { StabilityImageAnswer } from "./stability-api.js";

export const CONTENT_FILTERED_REFUSAL = "Stability's content moderation filtered the picture (it came back blurred).";

type Headers = Record<string, string | string[] | undefined>;

export function convertFromStabilityImage(provider: string, body: Buffer, headers: Headers): ImageResult {
  const upstreamRequestId = header(headers, "x-request-id");
  const answer = bareMediaType(headers["content-type"]) === "application/json" ? fromJson(provider, body) : fromBytes(body, headers);
  if (answer.bytes.length === 0) throw new UpstreamNetworkError(provider, "invalid_response", "the answer holds no picture");
  const result: ImageResult = { images: [] };
  // CONTENT_FILTERED is a 200 with a blurred picture: the model declined, so it is not handed out.
  if (answer.finishReason === "CONTENT_FILTERED") result.refusal = CONTENT_FILTERED_REFUSAL;
  else {
    const mediaType = sniffImageMediaType(answer.bytes) ?? answer.mediaType;
    if (!mediaType?.startsWith("image/")) throw new UpstreamNetworkError(provider, "invalid_response", "the answer is not a picture");
    result.images.push(answer.seed === undefined ? { bytes: answer.bytes, mediaType } : { bytes: answer.bytes, mediaType, seed: answer.seed });
  }
  if (upstreamRequestId) result.upstreamRequestId = upstreamRequestId;
  return result;
}

interface Answer {
  bytes: Buffer;
  mediaType: string | undefined;
  finishReason: string | undefined;
  seed: number | undefined;
}

function fromBytes(body: Buffer, headers: Headers): Answer {
  return {
    bytes: body,
    mediaType: bareMediaType(headers["content-type"]),
    finishReason: header(headers, "finish-reason"),
    seed: seedOf(header(headers, "seed")),
  };
}

function fromJson(provider: string, body: Buffer): Answer {
  const parsed = parseJson(body.toString("utf8"));
  if (parsed === undefined) throw new UpstreamNetworkError(provider, "invalid_response", "the body is not JSON");
  const answer = readAs(StabilityImageAnswer, parsed);
  if (!answer) throw new UpstreamNetworkError(provider, "invalid_response", "the answer holds no image");
  return { bytes: Buffer.from(answer.image, "base64"), mediaType: undefined, finishReason: answer.finish_reason, seed: seedOf(answer.seed) };
}

function seedOf(value: unknown): number | undefined {
  const seed = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof seed === "number" && Number.isInteger(seed) && seed >= 0 ? seed : undefined;
}

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
