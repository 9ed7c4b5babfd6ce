// The picture-reading endpoints for the client: kept beside GwClient (on its transport) so the
// image client stays one file per concern.
import type { DescribeResult } from "../gateway/vision/describe-service.js";
import type { DescribeRequestInput } from "../gateway/vision/vision-request.js";
import { GwApiError, isRecord } from "./gw-api-error.js";
import type { HttpTransport } from "./http-transport.js";

/**
 * POST /v1/image/describe: one of `mediaUrl` (an http(s) URL the gateway downloads) or
 * `mediaBase64` (base64 or a data: URL), and optionally `prompt` and `model`. The server's schema
 * input (a type import, erased: the client never loads the gateway).
 */
export type DescribeImageRequest = DescribeRequestInput;

/** POST /v1/image/describe answers these at the top level. */
export type DescribeImageBody = DescribeResult;

export class VisionClient {
  constructor(private readonly transport: HttpTransport) {}

  /** POST /v1/image/describe. */
  async describeImage(body: DescribeImageRequest, options: { signal?: AbortSignal } = {}): Promise<DescribeImageBody> {
    const answer = await this.transport.json<unknown>("/v1/image/describe", { ...options, json: body });
    if (!isRecord(answer) || typeof answer.text !== "string") {
      throw new GwApiError("unexpected image description answer from the gateway", 200, undefined, undefined, undefined, answer);
    }
    return answer as unknown as DescribeImageBody;
  }
}
