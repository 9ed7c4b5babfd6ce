// The picture-reading endpoints for the client: kept beside GwClient (on its transport) so the
// image client stays one file per concern.
import type { DescribeResult } from "../gateway/vision/describe-service.js";
import type { DescribeRequestInput } from "../gateway/vision/vision-request.js";
import { answerShape, hasString } from "./answer-shape.js";
import type { HttpTransport } from "./http-transport.js";

/**
 * POST /v1/image/describe: one of `mediaUrl` (an http(s) URL the gateway downloads) or
 * `mediaBase64` (base64 or a data: URL), and optionally `prompt` and `model`. The server's schema
 * input (a type import, erased: the client never loads the gateway).
 */
export type DescribeImageRequest = DescribeRequestInput;

/** POST /v1/image/describe answers these at the top level. */
export type DescribeImageBody = DescribeResult;

const DESCRIPTION = answerShape("image description", (body): body is DescribeImageBody => hasString(body, "text"));

export class VisionClient {
  constructor(private readonly transport: HttpTransport) {}

  /** POST /v1/image/describe. */
  async describeImage(body: DescribeImageRequest, options: { signal?: AbortSignal } = {}): Promise<DescribeImageBody> {
    return this.transport.json("/v1/image/describe", DESCRIPTION, { ...options, json: body });
  }
}
