// The picture-reading endpoints for the client: kept beside GwClient (on its transport) so the
// image client stays one file per concern.
import { GwApiError, isRecord } from "./gw-api-error.js";
import type { HttpTransport } from "./http-transport.js";

export interface DescribeImageRequest {
  /** An http(s) URL the gateway downloads. */
  mediaUrl?: string;
  /** Base64 or a data: URL. */
  mediaBase64?: string;
  prompt?: string;
  model?: string;
}

/** POST /v1/image/describe answers these at the top level. */
export interface DescribeImageBody {
  model: string;
  text: string;
}

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
